/** A usage or input problem: printed without a stack, exit code 2. */
export class UsageError extends Error {}

export const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

export const printError = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
