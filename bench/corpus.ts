// Synthetic but realistic agent notes and queries, from seeded generators so runs are
// reproducible. Templates use `{slot}` for a word-list pick and `[a|b|c]` for inline phrasing
// variants: without the variants, notes from one template embed so close together that the
// server's duplicate check (cosine ≥ 0.95) would turn a share of the timed writes into reinforcements.

/** Bump when the generator changes, so cached seeded stores are rebuilt. */
export const CORPUS_VERSION = 3;

export interface Note {
  content: string;
  tags: string[];
}

export type Random = () => number;

/** mulberry32: tiny, fast, good enough for picking words. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const between = (random: Random, low: number, high: number): number => low + Math.floor(random() * (high - low + 1));
const list = (text: string): readonly string[] => text.trim().split(/\s*\|\s*/);
/** Templates contain `|` inside their `[a|b]` variants, so they are separated by `||`. */
const templates = (text: string): readonly string[] => text.trim().split(/\s*\|\|\s*/);

const SLOTS: Record<string, readonly string[]> = {
  component: list(`auth middleware | billing service | search indexer | payment webhook handler | session store |
    rate limiter | job scheduler | email sender | image resizer | CSV importer | GraphQL gateway | feature flag client |
    audit logger | websocket hub | notification fanout | checkout flow | invoice generator | report exporter |
    permissions resolver | cache warmer | migration runner | retry queue | metrics collector | login form |
    password reset flow | file upload endpoint | pagination helper | config loader | health probe | API client |
    OAuth callback | tenant router | price calculator | inventory sync | PDF renderer | translation loader |
    geocoding adapter | SMS gateway | thumbnail worker | dependency graph builder | search ranking | diff viewer |
    admin dashboard | onboarding wizard | backup job | log shipper | secrets loader | timezone converter |
    shipping estimator | refund processor | coupon validator | avatar cropper | sitemap generator | chat widget`),
  dir: list(`src/api | src/services | src/workers | src/db | src/ui/components | lib/core | packages/shared |
    internal/billing | app/models | scripts | infra/terraform | src/auth | src/search | cmd/server | test/fixtures`),
  file: list(`client | handler | queue | schema | router | session | index | retry | config | cache | pool | webhook |
    invoice | upload | ranking | loader | tokens | limits | export | sync | parser | format | state | guard`),
  ext: list(`ts | py | go | rs | tsx | sql | rb | java`),
  problem: list(`times out | leaks file descriptors | double-charges the customer | drops the last page of results |
    returns stale data | deadlocks under load | throws a null pointer error | retries forever | logs the raw token |
    ignores the tenant header | rounds prices the wrong way | sends duplicate emails | blocks the event loop |
    loses the trailing newline | mixes up UTC and local time | exhausts the connection pool | swallows the error |
    writes a corrupt row | skips the permission check | hangs on shutdown | crashes on empty input |
    returns a 500 instead of a 404 | reorders the list | truncates unicode names | runs out of memory`),
  condition: list(`the payload is larger than 10 MB | two requests race on the same key | the upstream returns 429 |
    the database failover kicks in | the user has no email on file | the locale is set to Turkish |
    the cron job overlaps with the nightly backup | the cache is cold after a deploy | a webhook arrives twice |
    the clock jumps during daylight saving | the disk fills up | the tenant has more than 5000 seats |
    the request is retried by the load balancer | Redis is briefly unreachable | the CSV has a byte order mark |
    the session expires mid-upload | the feature flag is toggled at runtime | the queue backs up past a million items |
    an admin impersonates a user | the browser is offline | the token was rotated an hour ago | a migration is half applied`),
  fix: list(`wrapping the update in a transaction | adding an idempotency key | moving the call off the hot path |
    bounding the retries with exponential backoff | normalising timestamps to UTC at the edge |
    streaming the body instead of buffering it | adding a unique index | pinning the dependency version |
    checking the permission before the lookup | closing the handle in a finally block |
    reading the limit from config instead of hard-coding it | batching the inserts | switching to a keyset cursor |
    validating the input with a schema | adding a circuit breaker | taking a row lock before the read |
    caching the lookup for thirty seconds | escaping the value before logging it`),
  tech: list(`PostgreSQL | SQLite | Redis | Kafka | RabbitMQ | gRPC | GraphQL | zod | protobuf | OpenTelemetry |
    Prometheus | S3 | DynamoDB | Elasticsearch | pgvector | Temporal | Celery | esbuild | Vite | Playwright |
    pytest | vitest | Terraform | Helm | nginx | Envoy | Docker Compose | GitHub Actions | Bazel | Sentry`),
  purpose: list(`background jobs | the audit trail | session storage | feature flags | full-text search |
    service discovery | end-to-end tests | schema validation | tracing | secret rotation | the release pipeline |
    rate limiting | the event log | image storage | local development | config management | load testing |
    error reporting | database migrations`),
  reason: list(`it is already running in production | the team knows it well | it keeps the deploy to one binary |
    the licence allows redistribution | it halved the p95 latency in our benchmark | it needs no extra service |
    the vendor SDK only supports it | its failure semantics are clearer | it works offline |
    it is cheaper at our volume | the migration path is reversible | the customer contract requires it`),
  env: list(`staging | production | CI | the local dev stack | the EU cluster | the US cluster | the canary pool |
    the nightly build | preview environments | the load-test environment | the ARM runners`),
  person: list(`the planner agent | the reviewer | the release captain | the on-call engineer | the product owner |
    the security team | the data team | the frontend agent | the infra agent | the customer success lead`),
  test: list(`checkout total | login redirect | invoice rounding | upload resume | search pagination |
    webhook signature | password reset | role downgrade | tenant isolation | CSV export | retry budget |
    session refresh | cache eviction | timezone parsing | bulk delete | coupon expiry | avatar upload`),
  cause: list(`a shared temp directory | wall-clock time | test order | a real network call | an unseeded random |
    a leftover database row | a port that is sometimes taken | a race with the file watcher | the default locale |
    a timer that is never cleared | a global singleton`),
  metric: list(`p95 latency | the error rate | memory use | cold start time | queue depth | CPU time |
    database round trips | bundle size | build time | test suite duration`),
  command: list(`npm run migrate | make seed | cargo test --workspace | pytest -x tests/integration |
    go generate ./... | docker compose up db | terraform plan | npx prisma generate | ./scripts/rotate-keys.sh |
    kubectl rollout restart deploy/api`),
  verb: list(`load | save | resolve | parse | render | sync | fetch | validate | retry | flush | build | apply | merge`),
  noun: list(`Invoice | Session | Token | Tenant | Upload | Page | Price | Webhook | Report | Schema | Batch | Cursor |
    Quota | Profile | Refund | Coupon`),
};

const MAIN_TEMPLATES = templates(`
  [The|Our] {component} {problem} when {condition}. [I fixed it|Fixed it|The fix was] by {fix} in {path}. ||
  Decision: [we use|we standardise on|going with] {tech} for {purpose} [instead of|rather than] {tech}, because {reason}. ||
  The {test} test [in {path}|] is flaky on {env}: it depends on {cause}. [Retrying hides it; the real fix is|Please do not just retry it, the fix is] {fix}. ||
  [Heads up|Warning|Note] for whoever touches the {component}: {fn} {problem} if {condition}. [Do not remove the guard around it.|Keep the check in {path}.] ||
  Measured the {component} on {env}: {metric} went from {n} to {m} [ms|] after {fix}. ||
  To run the {component} locally you first need \`{command}\`, [otherwise|or else] {fn} fails with a confusing error about {cause}. ||
  {person} asked that every change to the {component} [gets|comes with] a test for the case where {condition}. ||
  Upgrading {tech} to {version} broke the {component} on {env}; [pinned it back|rolled it back] and opened a task to migrate {fn} first. ||
  Incident [note|summary]: on {env} the {component} {problem} for {n} minutes because {condition}. Mitigated by {fix}. ||
  Convention [for|in] the {component}: keep {fn} free of I/O and put the {tech} calls in {path}, so the tests stay fast. ||
  [Do not trust|Ignore] the docs for {tech} {version} about {purpose}; in practice it {problem} when {condition}. ||
  Open question for {person}: should the {component} keep using {tech} for {purpose}, given that it {problem} when {condition}? ||
  Finished [the refactor of|rewriting] {fn} in {path}; the {component} now reads its limits from config and {metric} dropped by {pct} percent. ||
  Root cause of the {test} failure on {env} was {cause}, not the {component} as {person} first suspected. ||
  The {component} and the {component} both call {fn}; changing its signature means updating {path} and {path} together. ||
  Security review: the {component} {problem} when {condition}. Until we ship {fix}, keep it behind the flag on {env}. ||
  [Spent an hour on|Lost time on] {fn}: the {component} {problem} only when {condition}, which is why nobody saw it on {env}. ||
  {tech} [is|was] the wrong tool for {purpose} here; the {component} needs {fix} and {tech} cannot do that without a plugin. ||
  [Reminder|Note to self]: {command} must run before the {test} tests, or {fn} {problem}. ||
  Handing over the {component} work: {fn} is done, {path} still {problem} when {condition}, and {person} owns the follow-up.`);

const FOLLOW_UPS = templates(`
  Ticket {ticket} tracks it. || [Owner|Assigned to]: {person}. || See the thread in #{channel}. ||
  Needs a second look before the {weekday} release. || Verified on {env}. || Not reproducible on {env} yet. ||
  {person} [agreed|signed off]. || Low priority unless it shows up on {env} again. || Added a regression test. ||
  Related to the {component} change last {weekday}. || Rollback plan: revert {path}.`);

const EXTRA_SLOTS: Record<string, readonly string[]> = {
  channel: list(`backend | infra | incidents | release | frontend | security | data-platform | qa`),
  weekday: list(`Monday | Tuesday | Wednesday | Thursday | Friday`),
};

const TAGS = list(`bug | decision | flaky-test | performance | security | infra | api | database | frontend |
  billing | auth | search | ci | release | convention | gotcha | todo | incident | testing | docs`);

function slotValue(name: string, random: Random): string {
  switch (name) {
    case "path":
      return `${pick(random, SLOTS.dir ?? [])}/${pick(random, SLOTS.file ?? [])}.${pick(random, SLOTS.ext ?? [])}`;
    case "fn":
      return `${pick(random, SLOTS.verb ?? [])}${pick(random, SLOTS.noun ?? [])}()`;
    case "version":
      return `${between(random, 1, 9)}.${between(random, 0, 30)}.${between(random, 0, 12)}`;
    case "n":
      return String(between(random, 12, 900));
    case "m":
      return String(between(random, 3, 400));
    case "pct":
      return String(between(random, 5, 90));
    case "ticket":
      return `#${between(random, 100, 9999)}`;
    default: {
      const values = SLOTS[name] ?? EXTRA_SLOTS[name];
      if (!values) throw new Error(`unknown slot ${name}`);
      return pick(random, values);
    }
  }
}

/** Expands `[a|b]` alternatives, then `{slot}`s; `slots` collects the values picked for them. */
function expand(template: string, random: Random, slots: string[] = []): string {
  const chosen = template.replace(/\[([^\]]*)\]/g, (_, options: string) => pick(random, options.split("|")));
  const text = chosen
    .replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = slotValue(name, random);
      slots.push(value);
      return value;
    })
    .replace(/\s+/g, " ")
    .trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const wordCount = (text: string): number => text.split(" ").length;

function tagsFor(random: Random): string[] {
  const count = between(random, 0, 3);
  return [...new Set(Array.from({ length: count }, () => pick(random, TAGS)))];
}

/** An endless stream of distinct notes (15–40 words) with 0–3 tags. */
export function noteStream(seed: number): () => Note {
  const random = seededRandom(seed);
  const seen = new Set<string>();
  return () => {
    for (;;) {
      let content = expand(pick(random, MAIN_TEMPLATES), random);
      if (random() < 0.7) {
        const withFollowUp = `${content} ${expand(pick(random, FOLLOW_UPS), random)}`;
        if (wordCount(withFollowUp) <= 40) content = withFollowUp;
      }
      const words = wordCount(content);
      if (words < 15 || words > 40 || seen.has(content)) continue;
      seen.add(content);
      return { content, tags: tagsFor(random) };
    }
  };
}

const QUERY_TEMPLATES = templates(`
  why does the {component} {problem} || how do I run the {component} locally || what did we decide about {tech} for {purpose} ||
  flaky {test} test on {env} || {component} {metric} || what happens when {condition} || {fn} {file} ||
  known problems with {tech} {purpose} || incident {component} {env} || is it safe to change the {component} ||
  who owns the {component} || {tech} upgrade broke || convention for {purpose} || {test} test depends on {cause}`);

/** Search queries of the kind an agent asks before starting work: short, some keyword-ish. */
export function queryStream(seed: number): () => string {
  const next = labelledQueryStream(seed);
  return () => next().q;
}

export interface LabelledQuery {
  q: string;
  /** The slot values the query names: a note that contains all of them is relevant to it. */
  terms: string[];
}

/** The same queries as `queryStream`, with what makes a note relevant to each (for recall). */
export function labelledQueryStream(seed: number): () => LabelledQuery {
  const random = seededRandom(seed);
  return () => {
    const terms: string[] = [];
    const q = expand(pick(random, QUERY_TEMPLATES), random, terms).toLowerCase();
    return { q, terms: terms.map((term) => term.toLowerCase()) };
  };
}
