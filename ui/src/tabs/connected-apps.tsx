// Connected apps (CONTRACT §19), the owner's alone: the grants humans made on the OAuth consent
// page (which app acts as which agent, with which scopes, since when, last used) and revoking one.
// The list follows the oauth.grant.* events, which only owners receive.

import { useEffect, useMemo, useState } from "preact/hooks";
import { api, ApiError, encode, query } from "../api.js";
import { ConfirmDialog } from "../components/dialog.js";
import { PagedList } from "../components/paged-list.js";
import { Pill } from "../components/pills.js";
import { Time } from "../components/time.js";
import { useApp } from "../context.js";
import { useLiveRefresh, useLoad, usePaged } from "../hooks.js";
import type { OAuthGrant } from "../../../src/wire/oauth.js";

/** A client whose id is the URL of its metadata document (CIMD) rather than one this server issued. */
const isMetadataDocument = (grant: OAuthGrant): boolean => grant.client_id.startsWith("https://");

export function ConnectedAppsTab() {
  const { agents, notify } = useApp();
  const [revoking, setRevoking] = useState<OAuthGrant | undefined>(undefined);
  const grants = usePaged<OAuthGrant>((cursor, limit) => api.get<OAuthGrant[]>("/oauth/grants" + query({ limit, cursor })), [], 50);
  // The URL clients are configured with, exactly as the server announces it (PUBLIC_URL may not be this page's origin).
  const mcpUrl = useLoad(async () => (await api.get<{ resource: string }>("/.well-known/oauth-protected-resource")).data.resource, []);
  useLiveRefresh(["oauth.grant.*"], grants.refresh);
  // A client refreshing its tokens sends no event: read the last uses again now and then.
  useEffect(() => {
    const timer = setInterval(grants.refresh, 60_000);
    return () => clearInterval(timer);
  }, [grants.refresh]);
  const roles = useMemo(() => new Map(agents.map((agent) => [agent.agent_id, agent.role])), [agents]);

  const url = mcpUrl.data === undefined ? "this server's MCP URL" : <span class="mono wrap-anywhere">{mcpUrl.data}</span>;

  return (
    <div class="apps-tab">
      <p class="apps-note muted" role="note">
        MCP clients connected to {url} by OAuth. Each was allowed once, on the consent page, to act as one agent; names are as each app gave them, unverified. Revoking one
        signs it out at once.
      </p>

      <section class="apps-section" aria-labelledby="apps-grants-heading">
        <header class="apps-section-header">
          <h2 id="apps-grants-heading">Grants</h2>
          <p class="muted small grow">Which app acts as which agent, with which scopes. No token is ever shown: Cairn keeps only their hashes.</p>
        </header>
        <PagedList
          paged={grants}
          empty={
            <>
              No app is connected. Give an MCP client (Claude Code, Cursor, VS Code, …) {url}: it registers itself and opens a consent page, where you sign in and choose the
              agent it acts as. Once you allow it, it is listed here. <span class="mono">docs/oauth.md</span> tells the whole flow.
            </>
          }
        >
          {(items) => (
            <div class="table-wrap">
              <table class="data-table stacking-table grant-table">
                <thead>
                  <tr>
                    <th scope="col">App</th>
                    <th scope="col">Acts as</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Granted</th>
                    <th scope="col">Last used</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((grant) => {
                    const role = roles.get(grant.agent_id);
                    const readOnly = !grant.scopes.includes("cairn:write");
                    return (
                      <tr key={grant.id} data-grant-id={grant.id}>
                        <th scope="row">
                          <span class="grant-client wrap-anywhere">{grant.client_name}</span>
                          <div class="muted small grant-host wrap-anywhere" title={grant.client_id}>
                            {isMetadataDocument(grant) ? "metadata document on " : "redirects to "}
                            <span class="mono">{grant.client_host}</span>
                          </div>
                        </th>
                        <td data-label="Acts as" class="grant-agent">
                          <span class="mono wrap-anywhere">{grant.agent_id}</span>
                          {role !== undefined && role !== "agent" && (
                            <>
                              {" "}
                              <Pill tone={`role-${role}`}>{role}</Pill>
                            </>
                          )}
                        </td>
                        <td data-label="Scopes" class="grant-scopes">
                          <span class="mono">{grant.scopes.join(" ")}</span>
                          {readOnly && <div class="muted small">read only: a viewer's rights</div>}
                        </td>
                        <td data-label="Granted" class="grant-created">
                          <Time iso={grant.created_at} />
                          <div class="muted small">by {grant.created_by}</div>
                        </td>
                        <td data-label="Last used" class="grant-last-used">
                          <Time iso={grant.last_used_at} />
                        </td>
                        <td class="row-actions">
                          <button type="button" class="link-button danger-text" onClick={() => setRevoking(grant)} aria-label={`Revoke ${grant.client_name} as ${grant.agent_id}`}>
                            Revoke
                          </button>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </PagedList>
      </section>

      {revoking && (
        <ConfirmDialog
          title={`Revoke “${revoking.client_name}”?`}
          confirmLabel="Revoke"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            let gone = false;
            try {
              await api.delete(`/oauth/grants/${encode(revoking.id)}`);
            } catch (error) {
              // Revoked meanwhile (by the flow itself, or another owner): what was asked for is done.
              if (!(error instanceof ApiError && error.status === 404)) throw error;
              gone = true;
            }
            grants.replace((candidate) => candidate.id === revoking.id, undefined);
            notify("success", gone ? `“${revoking.client_name}” was already revoked.` : `Revoked “${revoking.client_name}”: it no longer acts as ${revoking.agent_id}.`);
          }}
        >
          <p>
            <strong>{revoking.client_name}</strong> (<span class="mono">{revoking.client_host}</span>) stops acting as <strong class="mono">{revoking.agent_id}</strong> at
            once: its access and refresh tokens are refused from their next request.
          </p>
          <p>To connect again it must send you to the consent page. The agent stays, with its key and what it wrote.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
