// The settings a subscription is made with and changed by: its name, tags, how often and how much
// it polls, and the confidence of the entries it writes. Ranges are the API's (CONTRACT §15), so the
// browser refuses what the server would.

import { Field } from "../../components/fields.js";
import { splitList } from "../../format.js";
import type { Feed } from "../../../../src/wire/feeds.js";

/** The fields as typed. */
export interface SettingsDraft {
  name: string;
  tags: string;
  interval: string;
  maxItems: string;
  confidence: string;
}

export const DEFAULT_SETTINGS: SettingsDraft = { name: "", tags: "", interval: "60", maxItems: "20", confidence: "0.5" };

const MAX_TAGS = 8;

export function settingsOf(feed: Feed): SettingsDraft {
  return {
    name: feed.name,
    tags: feed.tags.join(", "),
    interval: String(feed.interval_minutes),
    maxItems: String(feed.max_items_per_poll),
    confidence: String(feed.confidence),
  };
}

/** The draft as the API's fields; an empty name is left out (the server then names it). */
export function settingsBody(draft: SettingsDraft): Record<string, unknown> {
  const body: Record<string, unknown> = {
    tags: splitList(draft.tags),
    interval_minutes: Number(draft.interval),
    max_items_per_poll: Number(draft.maxItems),
    confidence: Number(draft.confidence),
  };
  if (draft.name.trim()) body.name = draft.name.trim();
  return body;
}

/** A reason to refuse the draft before asking the server, or undefined. */
export function settingsProblem(draft: SettingsDraft): string | undefined {
  const tags = splitList(draft.tags);
  if (tags.length > MAX_TAGS) return `A feed takes at most ${MAX_TAGS} tags; this has ${tags.length}.`;
  return undefined;
}

interface SettingsFieldsProps {
  draft: SettingsDraft;
  onChange: (change: Partial<SettingsDraft>) => void;
  /** The hint under the name: what it defaults to. */
  nameLabel: string;
}

export function SettingsFields({ draft, onChange, nameLabel }: SettingsFieldsProps) {
  return (
    <>
      <Field label={nameLabel}>
        <input type="text" maxLength={200} value={draft.name} onInput={(event) => onChange({ name: event.currentTarget.value })} />
      </Field>
      <Field label={`Tags for its entries (comma-separated, up to ${MAX_TAGS})`}>
        <input type="text" value={draft.tags} onInput={(event) => onChange({ tags: event.currentTarget.value })} placeholder="e.g. release-notes, postgres" />
      </Field>
      <div class="form-grid">
        <Field label="Poll every (minutes, 15 to 1440)">
          <input type="number" required min={15} max={1440} step={1} value={draft.interval} onInput={(event) => onChange({ interval: event.currentTarget.value })} />
        </Field>
        <Field label="New items per poll (1 to 100)">
          <input type="number" required min={1} max={100} step={1} value={draft.maxItems} onInput={(event) => onChange({ maxItems: event.currentTarget.value })} />
        </Field>
        <Field label="Confidence of its entries (0 to 0.8)">
          <input type="number" required min={0} max={0.8} step={0.05} value={draft.confidence} onInput={(event) => onChange({ confidence: event.currentTarget.value })} />
        </Field>
      </div>
    </>
  );
}
