// The application: signs in, then shows the tabs under one header, kept live by the event stream.

import type { FunctionComponent } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { errorText, fetchAll, onSessionEnded } from "./api.js";
import { ErrorNote, Loading } from "./components/feedback.js";
import { Notices } from "./components/notices.js";
import { AppContext, type AppState, type Notice } from "./context.js";
import { useLiveRefresh, useLoad } from "./hooks.js";
import { liveStream, type LiveStatus } from "./live.js";
import { LoginScreen } from "./login.js";
import { currentAgent, login, loginTokenFromHash, logout } from "./session.js";
import { AgentsTab } from "./tabs/agents.js";
import { ArchivistTab } from "./tabs/archivist.js";
import { BlueprintsTab } from "./tabs/blueprints/blueprints-tab.js";
import { ConnectedAppsTab } from "./tabs/connected-apps.js";
import { DecisionsTab } from "./tabs/decisions/decisions-tab.js";
import { EventsTab } from "./tabs/events.js";
import { FeedsTab } from "./tabs/feeds/feeds-tab.js";
import { MemoryTab } from "./tabs/memory/memory-tab.js";
import { MeshTab } from "./tabs/mesh/mesh-tab.js";
import { MessagesTab } from "./tabs/messages.js";
import { OverviewTab } from "./tabs/overview.js";
import { ProjectsTab } from "./tabs/projects.js";
import { PulseTab } from "./tabs/pulse/pulse-tab.js";
import { SessionsTab } from "./tabs/sessions.js";
import { TasksTab } from "./tabs/tasks/tasks-tab.js";
import { chooseTheme, currentTheme, type Theme } from "./theme.js";
import type { AgentRecord, AgentSelf } from "../../src/wire/agents.js";
import type { Project } from "../../src/wire/projects.js";

interface TabDefinition {
  id: string;
  label: string;
  component: FunctionComponent;
  /** Shown to the owner only: the server answers anyone else 403 on every route it uses. */
  ownerOnly?: boolean;
}

const TABS: TabDefinition[] = [
  { id: "overview", label: "Overview", component: OverviewTab },
  { id: "memory", label: "Memory", component: MemoryTab },
  { id: "pulse", label: "Pulse", component: PulseTab },
  { id: "tasks", label: "Tasks", component: TasksTab },
  { id: "blueprints", label: "Blueprints", component: BlueprintsTab },
  { id: "decisions", label: "Decisions", component: DecisionsTab },
  { id: "feeds", label: "Feeds", component: FeedsTab },
  { id: "mesh", label: "Mesh", component: MeshTab, ownerOnly: true },
  { id: "apps", label: "Connected apps", component: ConnectedAppsTab, ownerOnly: true },
  { id: "messages", label: "Messages", component: MessagesTab },
  { id: "events", label: "Events", component: EventsTab },
  { id: "agents", label: "Agents", component: AgentsTab },
  { id: "projects", label: "Projects", component: ProjectsTab },
  { id: "sessions", label: "Sessions", component: SessionsTab },
  { id: "archivist", label: "Archivist", component: ArchivistTab },
];

const OVERVIEW = TABS[0] as TabDefinition;

type Phase = { name: "starting" } | { name: "signed-out"; reason: string | undefined } | { name: "signed-in"; me: AgentSelf } | { name: "failed"; error: unknown };

export function App() {
  const [phase, setPhase] = useState<Phase>({ name: "starting" });

  const enter = useCallback(async (reasonIfNone?: string) => {
    try {
      const me = await currentAgent();
      setPhase(me ? { name: "signed-in", me } : { name: "signed-out", reason: reasonIfNone });
    } catch (error) {
      setPhase({ name: "failed", error });
    }
  }, []);

  useEffect(() => {
    const token = loginTokenFromHash(location.hash);
    if (token === undefined) {
      void enter();
      return;
    }
    // The one-time URL is used once: drop the token from the address bar and history at once.
    history.replaceState(null, "", location.pathname + location.search);
    login({ token }).then(
      () => enter(),
      (error: unknown) => enter(`The login link did not work: ${errorText(error)}.`),
    );
  }, [enter]);

  useEffect(
    () =>
      onSessionEnded(() => {
        liveStream.stop();
        setPhase((current) => (current.name === "signed-in" ? { name: "signed-out", reason: "Your session ended. Sign in again." } : current));
      }),
    [],
  );

  switch (phase.name) {
    case "starting":
      return (
        <main class="login" id="main">
          <Loading label="Starting…" />
        </main>
      );
    case "failed":
      return (
        <main class="login" id="main">
          <div class="login-card">
            <ErrorNote error={phase.error} context="Could not reach the server" onRetry={() => void enter()} />
          </div>
        </main>
      );
    case "signed-out":
      return <LoginScreen reason={phase.reason} onSignedIn={() => void enter()} />;
    case "signed-in":
      return (
        <Shell
          me={phase.me}
          onSignedOut={() => {
            liveStream.stop();
            setPhase({ name: "signed-out", reason: "You signed out." });
          }}
        />
      );
  }
}

/** The tabs `role` may open. */
const tabsFor = (role: string): TabDefinition[] => TABS.filter((tab) => !tab.ownerOnly || role === "owner");

function tabFromHash(): string {
  const id = location.hash.replace(/^#\/?/, "").split(/[/?]/)[0] ?? "";
  return TABS.some((tab) => tab.id === id) ? id : "overview";
}

function Shell({ me: initialMe, onSignedOut }: { me: AgentSelf; onSignedOut: () => void }) {
  const [tabId, setTabId] = useState(tabFromHash);
  const [notices, setNotices] = useState<Notice[]>([]);
  const [status, setStatus] = useState<LiveStatus>(liveStream.status);
  const [theme, setTheme] = useState<Theme>(currentTheme);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const firstRender = useRef(true);

  useEffect(() => {
    const unsubscribe = liveStream.onStatus(setStatus);
    liveStream.start();
    setStatus(liveStream.status);
    return () => {
      unsubscribe();
      liveStream.stop();
    };
  }, []);

  useEffect(() => {
    const changed = () => setTabId(tabFromHash());
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);

  // Signing in just read who this is: re-read only when agents change.
  const me = useLoad(async () => (await currentAgent()) ?? initialMe, [], initialMe);
  const agents = useLoad(async () => (await fetchAll<AgentRecord>("/agents")).rows, []);
  const projects = useLoad(async () => (await fetchAll<Project>("/projects")).rows, []);
  const refreshShared = useCallback(() => {
    me.reload();
    agents.reload();
    projects.reload();
  }, [me.reload, agents.reload, projects.reload]);
  useLiveRefresh(["agent.*", "project.*", "task.claimed", "task.unclaimed", "task.completed", "task.failed"], refreshShared, 800);

  const nextNotice = useRef(1);
  const dismiss = useCallback((id: number) => setNotices((current) => current.filter((notice) => notice.id !== id)), []);
  const notify = useCallback(
    (kind: Notice["kind"], text: string) => {
      const id = nextNotice.current++;
      setNotices((current) => [...current.slice(-3), { id, kind, text }]);
      setTimeout(() => dismiss(id), kind === "error" ? 10_000 : 4000);
    },
    [dismiss],
  );

  const state = useMemo<AppState>(
    () => ({ me: me.data ?? initialMe, agents: agents.data ?? [], projects: projects.data ?? [], refreshShared, notify }),
    [me.data, initialMe, agents.data, projects.data, refreshShared, notify],
  );

  const signOut = () => {
    logout().then(onSignedOut, (error: unknown) => notify("error", `Could not sign out: ${errorText(error)}`));
  };
  const toggleTheme = () => {
    const next: Theme = theme === "dark" ? "light" : "dark";
    chooseTheme(next);
    setTheme(next);
  };

  const tabs = tabsFor(state.me.role);
  const tab = tabs.find((candidate) => candidate.id === tabId) ?? OVERVIEW;
  useEffect(() => {
    document.title = `${tab.label} · Cairn`;
    // Moving focus to the new tab's heading tells screen-reader and keyboard users where they are.
    if (firstRender.current) firstRender.current = false;
    else headingRef.current?.focus();
  }, [tab.id]);
  const Content = tab.component;
  const statusText = status === "live" ? "Live" : status === "stopped" ? "Offline" : status === "connecting" ? "Connecting…" : "Reconnecting…";

  return (
    <AppContext.Provider value={state}>
      <a class="skip-link" href="#main" onClick={(event) => {
        event.preventDefault();
        headingRef.current?.focus();
      }}>
        Skip to content
      </a>
      <header class="app-header">
        <div class="app-bar">
          <span class="brand">
            <span class="brand-mark" aria-hidden="true" />
            Cairn
          </span>
          <span class={`live-status live-${status}`} role="status" title="Connection to the event stream">
            <span class="live-dot" aria-hidden="true" />
            {statusText}
          </span>
          <span class="spacer" />
          <span class="signed-in muted small">
            Signed in as <strong>{state.me.agent_id}</strong>
          </span>
          <button type="button" class="icon-button theme-toggle" onClick={toggleTheme} aria-label={`Switch to ${theme === "dark" ? "light" : "dark"} theme`} title={`Switch to ${theme === "dark" ? "light" : "dark"} theme`}>
            {theme === "dark" ? "☀" : "☾"}
          </button>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </div>
        <nav class="tabs" aria-label="Sections">
          {tabs.map((candidate) => (
            <a key={candidate.id} href={`#/${candidate.id}`} class="tab" aria-current={candidate.id === tab.id ? "page" : undefined}>
              {candidate.label}
            </a>
          ))}
        </nav>
      </header>
      <main id="main" class="content">
        <h1 class="tab-title" tabIndex={-1} ref={headingRef}>
          {tab.label}
        </h1>
        {agents.error !== undefined && !agents.data && <ErrorNote error={agents.error} context="Could not load the agents" onRetry={agents.reload} />}
        {projects.error !== undefined && !projects.data && <ErrorNote error={projects.error} context="Could not load the projects" onRetry={projects.reload} />}
        <Content key={tab.id} />
      </main>
      <Notices notices={notices} dismiss={dismiss} />
    </AppContext.Provider>
  );
}
