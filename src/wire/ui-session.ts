// The web UI's login routes (src/http/ui.ts). They are outside the operation catalogue (a cookie, no
// API key), so these records appear in no OpenAPI document and nothing validates them against a
// schema; the server and the UI share their shapes here.

/** `GET /ui/config`: how the login page should ask. */
export interface UiConfig {
  password_login: boolean;
  agent_id: string;
}

/** `POST /ui/login`: the session (also set as a cookie) and whose it is. */
export interface UiLogin {
  session: string;
  agent_id: string;
  /** RFC 3339, UTC with milliseconds. */
  expires_at: string;
}
