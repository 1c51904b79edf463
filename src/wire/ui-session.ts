import { z } from "zod";
import { timestamp } from "./timestamp.js";

// The web UI's login routes (src/http/ui.ts). They are outside the operation catalogue (a cookie, no
// API key), so these records appear in no OpenAPI document; the server and the UI share them here.

/** `GET /ui/config`: how the login page should ask. */
export const uiConfig = z.object({ password_login: z.boolean(), agent_id: z.string() });
export type UiConfig = z.output<typeof uiConfig>;

/** `POST /ui/login`: the session (also set as a cookie) and whose it is. */
export const uiLogin = z.object({ session: z.string(), agent_id: z.string(), expires_at: timestamp });
export type UiLogin = z.output<typeof uiLogin>;
