import { describe, expect, it } from "vitest";
import { peerOfTxt, plainHttpUrl, txtOf } from "../../src/services/mesh/mdns-txt.js";

const ID = "6f1c2b9e-3d4a-4b8c-9e7f-0a1b2c3d4e5f";
const good = { id: ID, name: "team-a", url: "http://10.0.0.5:8080" };

describe("a _cairn._tcp TXT record heard on the network", () => {
  it("names a peer by id, name and URL", () => {
    expect(peerOfTxt(good)).toEqual({ instance_id: ID, name: "team-a", url: "http://10.0.0.5:8080" });
  });

  it("ignores keys it does not know", () => {
    expect(peerOfTxt({ ...good, version: "9", extra: "x" })).toEqual({ instance_id: ID, name: "team-a", url: "http://10.0.0.5:8080" });
  });

  it("spells the URL one way: no trailing slash, host in lower case", () => {
    expect(peerOfTxt({ ...good, url: "https://Cairn.Example.COM/" })?.url).toBe("https://cairn.example.com");
    expect(peerOfTxt({ ...good, url: "https://cairn.example.com/team/" })?.url).toBe("https://cairn.example.com/team");
    expect(peerOfTxt({ ...good, url: "http://cairn.example.com:80" })?.url).toBe("http://cairn.example.com");
  });

  it("is refused without an id, name or url, or when it is not a record", () => {
    for (const key of ["id", "name", "url"] as const) {
      const { [key]: _dropped, ...rest } = good;
      expect(peerOfTxt(rest), key).toBeNull();
    }
    for (const txt of [null, undefined, "id=x", 7, []]) expect(peerOfTxt(txt)).toBeNull();
  });

  it("is refused when the id is not a lower-case UUID", () => {
    for (const id of ["", "not-a-uuid", ID.toUpperCase(), `${ID}0`, ID.replaceAll("-", ""), `{${ID}}`]) expect(peerOfTxt({ ...good, id }), id).toBeNull();
  });

  it("is refused when the name is not an instance name (^[a-z0-9][a-z0-9-]{0,62}$)", () => {
    for (const name of ["", "-a", "Team", "team a", "team_a", "a".repeat(64), "<script>", "tëam"]) expect(peerOfTxt({ ...good, name }), name).toBeNull();
    expect(peerOfTxt({ ...good, name: "a".repeat(63) })?.name).toBe("a".repeat(63));
  });

  it("is refused when the URL is not plain http(s): other schemes, user info, a query or fragment, blanks, or over 251 characters", () => {
    const refused = [
      "ftp://10.0.0.5/",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "10.0.0.5:8080",
      "http://user:secret@10.0.0.5:8080",
      "http://user@10.0.0.5:8080",
      "http://10.0.0.5:8080/?token=x",
      "http://10.0.0.5:8080/?",
      "http://10.0.0.5:8080/#x",
      "http://10.0.0.5 :8080",
      "http://exa\nmple.com",
      "http://exa\tmple.com",
      `http://example.com/${"a".repeat(240)}`,
      "",
    ];
    for (const url of refused) expect(peerOfTxt({ ...good, url }), JSON.stringify(url)).toBeNull();
    expect(peerOfTxt({ ...good, url: `http://example.com/${"a".repeat(232)}` })).not.toBeNull();
  });

  it("is refused when a value is not a string", () => {
    expect(peerOfTxt({ ...good, id: 5 })).toBeNull();
    expect(peerOfTxt({ ...good, url: ["http://10.0.0.5"] })).toBeNull();
  });
});

describe("the TXT record this instance advertises", () => {
  it("carries id, name and url", () => {
    expect(txtOf({ instance_id: ID, name: "team-a", url: "http://10.0.0.5:8080" })).toEqual(good);
  });

  it("is not made when the public URL could not be read back by a peer", () => {
    expect(txtOf({ instance_id: ID, name: "team-a", url: `https://example.com/${"a".repeat(260)}` })).toBeNull();
    expect(plainHttpUrl("https://example.com/?a=b")).toBeNull();
  });
});
