/**
 * A store Row tied to the table it is read from. test/unit/schema-columns.test.ts checks each one
 * against both backends' migrations, so a Row, the SQLite schema and the PostgreSQL one cannot
 * drift apart unnoticed.
 */
export interface RowColumns<Row> {
  readonly table: string;
  /** The Row's fields that are columns of `table`. */
  readonly columns: readonly (keyof Row & string)[];
  /** Columns of `table` the Row leaves out. */
  readonly omitted: readonly string[];
}

/**
 * `columns` must name every field of `Row` but the `Computed` ones (a join, a count or a flag the
 * reads work out) and nothing else: the compiler checks both directions, so a field added to the
 * Row has to be placed here, as a column or as computed.
 */
export function rowColumns<Row, Computed extends keyof Row = never>(
  table: string,
  columns: Record<Exclude<keyof Row, Computed>, true>,
  omitted: readonly string[] = [],
): RowColumns<Row> {
  // The keys of a record typed by the Row's own keys.
  return { table, columns: Object.keys(columns) as (keyof Row & string)[], omitted };
}
