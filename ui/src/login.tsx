// The sign-in screen: a password (UI_PASSWORD) or the one-time URL the server prints at start.

import { useState } from "preact/hooks";
import { ApiError, errorText } from "./api.js";
import { ErrorNote, Loading } from "./components/feedback.js";
import { Field } from "./components/fields.js";
import { useLoad } from "./hooks.js";
import { login, loadConfig } from "./session.js";

interface LoginProps {
  onSignedIn: () => void;
  /** Why the login screen is shown, e.g. the session ended or the one-time link failed. */
  reason: string | undefined;
}

export function LoginScreen({ onSignedIn, reason }: LoginProps) {
  const config = useLoad(loadConfig, []);
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | undefined>(undefined);

  const submit = (event: Event) => {
    event.preventDefault();
    if (!password) {
      setFailure("Enter the password.");
      return;
    }
    setBusy(true);
    setFailure(undefined);
    login({ password })
      .then(() => onSignedIn())
      .catch((error: unknown) => {
        setBusy(false);
        if (error instanceof ApiError && error.status === 401) setFailure("Wrong password. Check UI_PASSWORD and try again.");
        else if (error instanceof ApiError && error.status === 429) setFailure(`Too many attempts: ${error.detail}. Wait a minute and try again.`);
        else setFailure(errorText(error));
      });
  };

  return (
    <main class="login" id="main">
      <div class="login-card">
        <h1 class="brand-title">
          <span class="brand-mark" aria-hidden="true" />
          Cairn
        </h1>
        {reason && (
          <p class="login-reason" role="status">
            {reason}
          </p>
        )}
        {config.loading && !config.data && <Loading />}
        {config.error !== undefined && !config.data && <ErrorNote error={config.error} onRetry={config.reload} context="Could not reach the server" />}
        {config.data && (
          <>
            {config.data.password_login ? (
              <form onSubmit={submit} class="stack" noValidate>
                <Field label="Password">
                  <input
                    type="password"
                    name="password"
                    autocomplete="current-password"
                    value={password}
                    onInput={(event) => setPassword(event.currentTarget.value)}
                    aria-invalid={failure !== undefined}
                    aria-describedby={failure ? "login-failure" : undefined}
                    autofocus
                  />
                </Field>
                {failure && (
                  <p class="error-note" id="login-failure" role="alert">
                    {failure}
                  </p>
                )}
                <button type="submit" class="primary" disabled={busy}>
                  {busy ? "Signing in…" : "Sign in"}
                </button>
              </form>
            ) : (
              <p>
                Sign in with the one-time login URL printed in the server's output when it started (it ends in <code>/ui/#login=…</code>),
                or print a new one with <code>npx cairn ui-link</code> where the server runs. To sign in with a password instead, start the
                server with <code>UI_PASSWORD</code> set.
              </p>
            )}
          </>
        )}
      </div>
    </main>
  );
}
