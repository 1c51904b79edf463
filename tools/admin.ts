// Operator commands that are not API operations (the CLI's backup, doctor and reindex).
export { backupDatabase, runChecks, type Check } from "../src/services/admin.js";
