import { spawnSync } from "node:child_process";
import { describe } from "vitest";

/**
 * Whether this process may make a network namespace of its own (`unshare -n`: root, or
 * CAP_SYS_ADMIN). mDNS is tested only inside one, so its multicast never reaches the host's
 * network. Without the right the test is skipped (said once: test/global-setup.ts), except in CI,
 * which runs as root and where a missing right must fail rather than pass quietly.
 */
export const CAN_UNSHARE = spawnSync("unshare", ["-n", "true"], { stdio: "ignore" }).status === 0;
export const NAMESPACE_SKIP_REASON = "the mDNS test (test/integration/mesh-mdns.test.ts) is skipped: `unshare -n` is not permitted here";
export const describeInNamespace: typeof describe = CAN_UNSHARE || process.env.CI ? describe : (describe.skip as typeof describe);
