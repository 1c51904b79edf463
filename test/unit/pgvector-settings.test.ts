import { describe, expect, it } from "vitest";
import { searchSettings } from "../../src/store/postgres/vectors.js";

describe("pgvector search settings", () => {
  it("scan on past filtered-out rows from pgvector 0.8, gathering twice k (250 to 1000)", () => {
    for (const version of ["0.8.0", "0.8.6", "0.9.1", "1.0.0"]) {
      expect(searchSettings(version, 10)).toEqual({ "hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "250" });
    }
    expect(searchSettings("0.8.6", 300)["hnsw.ef_search"]).toBe("600");
    expect(searchSettings("0.8.6", 5000)["hnsw.ef_search"]).toBe("1000");
  });

  it("before 0.8, which has no iterative scan, gather as widely as HNSW allows and set nothing it lacks", () => {
    for (const version of ["0.7.0", "0.7.4", "0.5.1"]) expect(searchSettings(version, 10)).toEqual({ "hnsw.ef_search": "1000" });
  });
});
