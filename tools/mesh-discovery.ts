import { z } from "zod";
import { meshDiscovered } from "../src/wire/mesh.js";
import { defineOperation } from "./operation.js";

const meshDiscoveredList = defineOperation({
  name: "mesh_discovered_list",
  title: "List discovered Cairn instances",
  description:
    "Owner only: Cairn instances heard of on the local network (mDNS, when MESH_MDNS is on) or named by a linked peer's gossip, " +
    "most recently seen first (at most 500, none unseen for 7 days), each with `linked` when a link to it exists. " +
    "Suggestions only: nothing links itself, and linking one still takes a token from its owner.",
  kind: "read",
  roles: ["owner"],
  restOnly: true,
  http: { method: "GET", path: "/mesh/discovered" },
  input: z.strictObject({}),
  output: z.array(meshDiscovered),
  handle({ services }) {
    return services.meshDiscovered.list();
  },
});

export const meshDiscoveryOperations = [meshDiscoveredList];
