import { pgDb } from "./run.js";
import type { Reader } from "../store.js";

/** How long the statistics read from `pg_stats` are used before they are read again. */
const TTL_MS = 10 * 60_000;

/**
 * The share of entries holding each of the keyword index's most common lexemes, as PostgreSQL's
 * ANALYZE sampled it (`pg_stats.most_common_elems` of `memory.search`). Counting a common word
 * exactly reads every entry that holds it (tens of milliseconds at 100,000 entries, and the most
 * frequent counts are those); the sample answers at once, within a few per cent, which moves a
 * word's idf by hundredths. Rarer words, which no sample lists, are counted exactly and cheaply.
 * Empty until the table has been analysed (autovacuum does, as it grows).
 */
export class CommonLexemes {
  private shares: Map<string, number> | undefined;
  private readAt = -Infinity;
  private reading: Promise<void> | undefined;

  /** `reader`: the pool's, so a read never runs inside a caller's transaction. */
  constructor(private readonly reader: Reader) {}

  /** The lexeme's share of entries, if the statistics list it; reads them first when they are old. */
  async share(lexeme: string): Promise<number | undefined> {
    if (performance.now() - this.readAt >= TTL_MS) {
      this.reading ??= this.read().finally(() => {
        this.reading = undefined;
      });
      await this.reading;
    }
    return this.shares?.get(lexeme);
  }

  private async read(): Promise<void> {
    // most_common_elem_freqs ends with the minimum, maximum and null share: one per element before them.
    const row = await pgDb
      .get<{ elements: string[] | null; shares: number[] | null }>(
        this.reader,
        `SELECT most_common_elems::text::text[] AS elements, most_common_elem_freqs::float8[] AS shares
           FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'memory' AND attname = 'search'`,
      )
      .catch(() => undefined);
    const shares = new Map<string, number>();
    const elements = row?.elements ?? [];
    const values = row?.shares ?? [];
    if (values.length >= elements.length) for (const [index, element] of elements.entries()) shares.set(element, values[index] as number);
    this.shares = shares;
    this.readAt = performance.now();
  }
}
