// Only the two shapes feeds use are read: RFC 3339 / W3C-DTF (Atom, JSON Feed, dc:date) and
// RFC 822 / 2822 (RSS). `Date.parse` alone would accept "1" as the year 2001 and read a date
// without a zone in the server's own time zone, so a string must match a shape first, and a date
// without a zone is taken as UTC.

const W3C_DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/i;

const RFC822_DATE =
  /^(?:[A-Za-z]{2,9},?\s*)?(\d{1,2})[\s-]+([A-Za-z]{3,9})\.?[\s-]+(\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([A-Za-z]{1,5}|[+-]\d{4}|[+-]\d{2}:\d{2})?$/;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** The North American zones RFC 822 names; any other letters (military zones, typos) count as UTC. */
const ZONE_OFFSETS: Record<string, number> = { EST: -5, EDT: -4, CST: -6, CDT: -5, MST: -7, MDT: -6, PST: -8, PDT: -7 };

/** A feed's date as `YYYY-MM-DDTHH:MM:SSZ`, or undefined when it has neither shape or is no real date. */
export function feedDateToIso(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim().slice(0, 64);
  const epochMs = w3cDate(text) ?? rfc822Date(text);
  if (epochMs === undefined || !Number.isFinite(epochMs)) return undefined;
  const date = new Date(epochMs);
  const year = date.getUTCFullYear();
  if (year < 1970 || year > 9999) return undefined;
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function w3cDate(text: string): number | undefined {
  const match = W3C_DATE.exec(text);
  if (!match) return undefined;
  const [, year, month = "01", day = "01", hour = "00", minute = "00", second = "00", , zone] = match;
  const offsetMinutes = zone === undefined || zone.toUpperCase() === "Z" ? 0 : zoneMinutes(zone);
  return fromParts(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second), offsetMinutes);
}

function rfc822Date(text: string): number | undefined {
  const match = RFC822_DATE.exec(text);
  if (!match) return undefined;
  const [, day, monthName, yearText, hour, minute, second = "00", zone] = match;
  const month = MONTHS.indexOf((monthName as string).slice(0, 3).toLowerCase());
  if (month < 0) return undefined;
  let year = Number(yearText);
  // RFC 822's two-digit years: RFC 2822 §4.3 reads 00–49 as 20xx and 50–99 as 19xx.
  if ((yearText as string).length === 2) year += year < 50 ? 2000 : 1900;
  let offsetMinutes = 0;
  if (zone !== undefined && /^[+-]/.test(zone)) offsetMinutes = zoneMinutes(zone);
  else if (zone !== undefined) offsetMinutes = (ZONE_OFFSETS[zone.toUpperCase()] ?? 0) * 60;
  return fromParts(year, month + 1, Number(day), Number(hour), Number(minute), Number(second), offsetMinutes);
}

function zoneMinutes(zone: string): number {
  const sign = zone.startsWith("-") ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || "0"));
}

/** Epoch milliseconds of a wall-clock time at an offset, or undefined when a field is out of range. */
function fromParts(year: number, month: number, day: number, hour: number, minute: number, second: number, offsetMinutes: number): number | undefined {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 60) return undefined;
  const local = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59));
  // Date.UTC rolls 31 February over into March; such a date is no date.
  if (new Date(local).getUTCDate() !== day && hour < 24) return undefined;
  return local - offsetMinutes * 60_000;
}
