/** A usage or input problem: printed without a stack, exit code 2. */
export class UsageError extends Error {}

export const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

export const printError = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/**
 * `print` that resolves once the text is handed to the OS: a pipe takes 64 KiB at once and node
 * queues the rest, which a process.exit right after would drop.
 */
export const printFlushed = (text: string): Promise<void> =>
  new Promise((resolve, reject) => {
    process.stdout.write(`${text}\n`, (error) => (error ? reject(error) : resolve()));
  });
