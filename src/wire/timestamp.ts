import { z } from "zod";

/** Every time a record carries: RFC 3339 in UTC with milliseconds, as the server writes it. */
export const timestamp = z.string().meta({ format: "date-time", description: "RFC 3339 UTC with milliseconds" });
