/**
 * A refusal in OAuth's own terms (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707, RFC 7009): the OAuth
 * routes answer `{error, error_description}` rather than Cairn's `{detail, code}`. `redirect`: at
 * the authorization endpoint, once the client and its redirect URI are known good, the refusal
 * goes back to the client by redirect; before that it is shown to the human as a page.
 */
export class OAuthError extends Error {
  /** Where a redirected refusal sends the browser (the client's redirect URI with `error`, `state`, `iss`). */
  location: string | undefined;

  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly redirect = false,
  ) {
    super(description);
    this.name = "OAuthError";
  }

  withLocation(location: string): this {
    this.location = location;
    return this;
  }
}

export const invalidRequest = (description: string): OAuthError => new OAuthError("invalid_request", description);
/** An unknown or expired client, or a wrong secret: 401, so SDKs register again. */
export const invalidClient = (description = "unknown client or wrong client credentials"): OAuthError => new OAuthError("invalid_client", description, 401);
export const invalidGrant = (description: string): OAuthError => new OAuthError("invalid_grant", description);

/** A choice on the consent page that cannot be made (an agent id taken, an identity never offered): the page is shown again, saying why. */
export class ConsentProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConsentProblem";
  }
}
