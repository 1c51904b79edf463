import { createServer } from "node:net";

/** A loopback port nothing listens on (one that was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("the listener has no port");
  return address.port;
}

/** A loopback URL nothing answers at. */
export const closedUrl = async (): Promise<string> => `http://127.0.0.1:${await closedPort()}`;
