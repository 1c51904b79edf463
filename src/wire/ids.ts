// Identifiers as the API spells them, with no zod: read by the settings of clients that load none.

/** An agent's or a project's id: a lower-case slug of 1 to 64 characters. */
export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
