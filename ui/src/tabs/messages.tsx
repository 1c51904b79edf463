// Messages: the unread inbox and every message sent or received, composing to an agent, to
// everyone (`broadcast`) or to a project's members (`project:<id>`), and marking read.

import { useState } from "preact/hooks";
import { api, encode, query } from "../api.js";
import { ActionButton } from "../components/action-button.js";
import { Dialog } from "../components/dialog.js";
import { Field, FormFooter } from "../components/fields.js";
import { PagedList } from "../components/paged-list.js";
import { AgentSelect } from "../components/pickers.js";
import { Pill } from "../components/pills.js";
import { Time } from "../components/time.js";
import { useApp } from "../context.js";
import { useLiveRefresh, usePaged } from "../hooks.js";
import type { MarkedRead, Message } from "../../../src/wire/messages.js";

type View = "inbox" | "all";

interface Reply {
  to: string;
  subject: string;
  replyTo: string;
}

export function MessagesTab() {
  const { me, notify } = useApp();
  const [view, setView] = useState<View>("inbox");
  const [readFilter, setReadFilter] = useState<"" | "true" | "false">("");
  const [party, setParty] = useState("");
  const [composing, setComposing] = useState<Reply | null | undefined>(undefined);

  const paged = usePaged<Message>(
    (cursor, limit) =>
      view === "inbox"
        ? api.get<Message[]>("/messages/inbox" + query({ limit, cursor }))
        : api.get<Message[]>("/messages" + query({ read: readFilter || undefined, agent: party || undefined, limit, cursor })),
    [view, readFilter, party],
    30,
  );
  useLiveRefresh(["message.*"], paged.refresh);

  const markRead = async (message: Message) => {
    await api.post(`/messages/${encode(message.id)}/read`);
    paged.refresh();
  };
  const markAll = async () => {
    const response = await api.post<MarkedRead>("/messages/inbox/read-all");
    notify("success", `Marked ${response.data.marked} read.`);
    paged.refresh();
  };

  return (
    <div class="messages-tab">
      <div class="toolbar">
        <div class="segmented" role="group" aria-label="Which messages">
          <button type="button" aria-pressed={view === "inbox"} onClick={() => setView("inbox")}>
            Inbox (unread)
          </button>
          <button type="button" aria-pressed={view === "all"} onClick={() => setView("all")}>
            All messages
          </button>
        </div>
        {view === "all" && (
          <fieldset class="filters">
            <legend class="visually-hidden">Filters</legend>
            <Field label="Read state">
              <select value={readFilter} onChange={(event) => setReadFilter(event.currentTarget.value as typeof readFilter)}>
                <option value="">read and unread</option>
                <option value="false">unread</option>
                <option value="true">read</option>
              </select>
            </Field>
            <AgentSelect label="With agent" value={party} onChange={setParty} emptyLabel="anyone" />
          </fieldset>
        )}
        <span class="spacer" />
        {view === "inbox" && paged.items.length > 0 && (
          <ActionButton onAction={markAll}>Mark all read</ActionButton>
        )}
        <button type="button" class="primary new-button" onClick={() => setComposing(null)}>
          New message
        </button>
      </div>
      <PagedList paged={paged} empty={view === "inbox" ? "No unread message." : "No message yet."}>
        {(items) => (
          <ul class="message-list">
            {items.map((message) => {
              const sent = message.from === me.agent_id;
              return (
                <li key={message.id} class={message.read || sent ? "message" : "message is-unread"} data-message-id={message.id}>
                  <div class="row-line">
                    {!message.read && !sent && <Pill tone="unread">unread</Pill>}
                    <strong>{message.from}</strong>
                    <span class="muted">→ {message.to}</span>
                    <span class="spacer" />
                    <span class="muted small">
                      <Time iso={message.created_at} />
                    </span>
                  </div>
                  {message.subject && <p class="message-subject">{message.subject}</p>}
                  <div class="message-body">{message.body}</div>
                  <div class="row-line small">
                    {message.reply_to && <span class="muted">in reply to {message.reply_to.slice(0, 8)}</span>}
                    <span class="spacer" />
                    {!sent && (
                      <button
                        type="button"
                        class="link-button"
                        onClick={() => setComposing({ to: message.from, subject: message.subject.startsWith("Re: ") ? message.subject : `Re: ${message.subject}`, replyTo: message.id })}
                      >
                        Reply
                      </button>
                    )}
                    {!message.read && !sent && (
                      <ActionButton className="link-button" onAction={() => markRead(message)}>
                        Mark read
                      </ActionButton>
                    )}
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </PagedList>
      {composing !== undefined && (
        <ComposeDialog
          reply={composing}
          onClose={() => setComposing(undefined)}
          onSent={() => {
            notify("success", "Message sent.");
            paged.refresh();
          }}
        />
      )}
    </div>
  );
}

function ComposeDialog({ reply, onClose, onSent }: { reply: Reply | null; onClose: () => void; onSent: () => void }) {
  const { projects } = useApp();
  const [kind, setKind] = useState<"agent" | "broadcast" | "project">("agent");
  const [agent, setAgent] = useState(reply?.to ?? "");
  const [project, setProject] = useState(projects[0]?.id ?? "");
  const [subject, setSubject] = useState(reply?.subject ?? "");
  const [body, setBody] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const submit = (event: Event) => {
    event.preventDefault();
    const to = kind === "broadcast" ? "broadcast" : kind === "project" ? `project:${project}` : agent;
    if (!to || to === "project:") {
      setError(new Error(kind === "project" ? "Choose a project." : "Choose who gets the message."));
      return;
    }
    if (!body.trim()) {
      setError(new Error("Write the message first."));
      return;
    }
    const payload: Record<string, unknown> = { to, body };
    if (subject.trim()) payload.subject = subject.trim();
    if (reply) payload.reply_to = reply.replyTo;
    setBusy(true);
    setError(undefined);
    api
      .post("/messages", payload)
      .then(() => {
        onSent();
        onClose();
      })
      .catch((failure: unknown) => {
        setError(failure);
        setBusy(false);
      });
  };

  return (
    <Dialog title={reply ? "Reply" : "New message"} onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        <div class="form-grid">
          <Field label="Send to">
            <select value={kind} onChange={(event) => setKind(event.currentTarget.value as typeof kind)} disabled={reply !== null}>
              <option value="agent">one agent</option>
              <option value="broadcast">everyone (broadcast)</option>
              <option value="project">a project's members</option>
            </select>
          </Field>
          {kind === "agent" && <AgentSelect label="Agent" value={agent} onChange={setAgent} emptyLabel="choose an agent" />}
          {kind === "project" && (
            <Field label="Project">
              <select value={project} onChange={(event) => setProject(event.currentTarget.value)}>
                {projects.length === 0 && <option value="">no project exists</option>}
                {projects.map((candidate) => (
                  <option key={candidate.id} value={candidate.id}>
                    project:{candidate.id}
                  </option>
                ))}
              </select>
            </Field>
          )}
        </div>
        <Field label="Subject (optional)">
          <input type="text" value={subject} onInput={(event) => setSubject(event.currentTarget.value)} />
        </Field>
        <Field label="Message">
          <textarea rows={6} value={body} onInput={(event) => setBody(event.currentTarget.value)} />
        </Field>
        <FormFooter error={error} busy={busy} label="Send" busyLabel="Sending…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
