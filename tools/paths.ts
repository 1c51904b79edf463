// Where the server keeps things, for adapters that print or check them.
export { credentialsPath } from "../src/services/credentials.js";
export { databasePath } from "../src/services/index.js";
