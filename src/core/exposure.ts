import type { Config } from "./config.js";

export interface ExposureWarning {
  /** The setting that would silence it. */
  setting: "PUBLIC_URL" | "REGISTRATION_KEY" | "UI_PASSWORD";
  message: string;
}

/** The shortest UI_PASSWORD an exposed server takes without a warning. */
const UI_PASSWORD_MIN_LENGTH = 12;

/**
 * What a server reachable from other machines is missing (CONTRACT §10a): `serve` logs these at
 * start and `cairn doctor` reports them. A loopback server needs neither setting.
 */
export function exposureWarnings(config: Config): ExposureWarning[] {
  if (config.hostIsLoopback) return [];
  const warnings: ExposureWarning[] = [];
  if (!config.publicUrlExplicit) {
    warnings.push({
      setting: "PUBLIC_URL",
      message:
        `HOST ${config.HOST} is not a loopback address and PUBLIC_URL is not set: onboarding scripts, plugin ` +
        `configurations and OAuth metadata use the derived host ${new URL(config.PUBLIC_URL).hostname}, and the ` +
        "server answers only to that host, loopback and ALLOWED_HOSTS; set PUBLIC_URL to the address clients use",
    });
  }
  if (config.REGISTRATION_KEY === "") {
    warnings.push({
      setting: "REGISTRATION_KEY",
      message:
        `HOST ${config.HOST} is not a loopback address and REGISTRATION_KEY is not set: agents cannot register ` +
        "themselves (self-registration is open only on loopback) and onboarding fails; set REGISTRATION_KEY, or " +
        "create agents with cairn agent add",
    });
  }
  // Counted in code points, as a person typing it would: the sign-in allows 5 tries a minute per address.
  const passwordLength = [...config.UI_PASSWORD].length;
  if (passwordLength > 0 && passwordLength < UI_PASSWORD_MIN_LENGTH) {
    warnings.push({
      setting: "UI_PASSWORD",
      message:
        `HOST ${config.HOST} is not a loopback address and UI_PASSWORD is ${passwordLength} characters: it signs an owner ` +
        `in to the web UI from any machine that reaches the server; use ${UI_PASSWORD_MIN_LENGTH} or more (a generated ` +
        "one, such as `openssl rand -base64 18`), or leave it empty to sign in with the one-time link serve prints",
    });
  }
  return warnings;
}
