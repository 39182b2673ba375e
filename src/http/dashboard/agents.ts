import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { runAgentNow } from '../views/agents.ts';
import { updateAgent } from '../../commands/agents.ts';
import { type AgentKey, isAgentKey } from '../../domain/agents.ts';
import { ServiceError } from '../../domain/errors.ts';
import { listAgentRuns } from '../../readModels/agentRuns.ts';
import { listAgents } from '../../readModels/agentViews.ts';
import { type SiteDoc, listSitesOfTeam } from '../../readModels/sites.ts';
import { httpStatusOf } from '../errorHandler.ts';
import { firstProblem, formText, parseForm, typedIn } from '../web/forms.ts';
import { type SafeHtml, html } from '../web/html.ts';
import type { SignedIn } from '../web/session.ts';
import { actingFor } from '../actingFor.ts';
import { noticeHtml, unlicensedSiteSection } from './show.ts';

type Show = (reply: FastifyReply, s: SignedIn, title: string, body: SafeHtml, status?: number) => unknown;

/** The settings form: the toggle, the cadence and the settings as JSON (each agent's keys differ). */
const agentForm = z.object({
  is_active: formText.transform((v) => v === 'on'),
  cadence_hours: formText.pipe(
    z
      .string()
      .trim()
      .regex(/^(\d{1,3})?$/, 'The cadence is a whole number of hours, or empty.')
      .transform((v) => (v === '' ? null : Number(v))),
  ),
  settings: formText.transform((text, ctx) => {
    if (text.trim() === '') return {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // reported below
    }
    ctx.addIssue({ code: 'custom', message: 'The settings must be a JSON object.' });
    return z.NEVER;
  }),
});

type AgentParams = { siteId: string; agentKey: string };

/** A refused settings form as it was sent, shown again in its agent's form so nothing typed is lost; `invalid` is the field refused. */
type SentForm = { siteId: string; agentKey: string; isActive: boolean; cadence: string; settings: string; invalid: 'cadence_hours' | 'settings' };

const sentForm = (site: SiteDoc, agentKey: string, body: unknown, invalid: SentForm['invalid']): SentForm => {
  const typed = typedIn(body);
  return { siteId: site.id, agentKey, isActive: typed.text('is_active') === 'on', cadence: typed.text('cadence_hours'), settings: typed.text('settings'), invalid };
};

/** The agents page: per site, each agent's toggle, settings and run button, and the recent runs. Same commands and gates as the API. */
export function agentPages(app: FastifyInstance, show: Show, canManage: (s: SignedIn) => boolean) {
  const schemas = () => app.agentWork.workSettingsSchemas;

  const agentsPage = async (reply: FastifyReply, s: SignedIn, notice?: { error?: string; info?: string; sent?: SentForm }, status = 200) => {
    const sections: SafeHtml[] = [];
    for (const site of await listSitesOfTeam(app.readModels, s.user.teamId, { sortBy: 'createdAt' })) {
      if (!site.licensed) {
        sections.push(unlicensedSiteSection(site));
        continue;
      }
      const agents = await listAgents(app.readModels, site, schemas());
      const runs = (await listAgentRuns(app.readModels, site.id, {}, undefined, 10)).runs;
      const rows = agents.map((a) => {
        const sent = notice?.sent?.siteId === site.id && notice.sent.agentKey === a.agentKey ? notice.sent : null;
        const isActive = sent ? sent.isActive : a.isActive;
        return html`<tr>
          <td><strong>${a.template}</strong><br><code>${a.agentKey}</code></td>
          <td>${a.planAllows ? (a.isActive ? 'active' : 'inactive') : html`<em>not on the ${site.plan} plan</em>`}</td>
          <td>${a.lastRun ? `${a.lastRun.status} (${a.lastRun.queuedAt})` : '—'}</td>
          <td>${
            canManage(s) && a.planAllows
              ? html`<form method="post" action="/dashboard/agents/${site.id}/${a.agentKey}">
                  <input type="hidden" name="csrf" value="${s.csrf}">
                  <label><input type="checkbox" name="is_active" ${isActive ? html`checked` : ''}> Active</label>
                  <label for="cadence-${site.id}-${a.agentKey}">Run every (hours, empty: on demand only)</label>
                  <input id="cadence-${site.id}-${a.agentKey}" name="cadence_hours" type="number" min="1" max="168" value="${sent ? sent.cadence : (a.cadenceHours ?? '')}"${sent?.invalid === 'cadence_hours' ? html` aria-invalid="true"` : ''}>
                  <label for="settings-${site.id}-${a.agentKey}">Settings (JSON; defaults: ${JSON.stringify(a.defaults)})</label>
                  <textarea id="settings-${site.id}-${a.agentKey}" name="settings" rows="3"${sent?.invalid === 'settings' ? html` aria-invalid="true"` : ''}>${sent ? sent.settings : JSON.stringify(a.settings)}</textarea>
                  <button type="submit">Save ${a.agentKey}</button>
                </form>
                <form method="post" action="/dashboard/agents/${site.id}/${a.agentKey}/run"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit">Run ${a.agentKey} now</button></form>`
              : html`<code>${JSON.stringify(a.settings)}</code>`
          }</td></tr>`;
      });
      sections.push(html`<h2>${site.domain} <small>(${site.id}, ${site.plan})</small></h2>
        <table><thead><tr><th>Agent</th><th>Status</th><th>Last run</th><th>Settings</th></tr></thead><tbody>${rows}</tbody></table>
        <h3>Recent runs</h3>
        ${
          runs.length
            ? html`<table><thead><tr><th>Run</th><th>Agent</th><th>Trigger</th><th>Status</th><th>Queued</th><th>Outputs</th></tr></thead><tbody>${runs.map(
                (r) => html`<tr><td><code>${r.id}</code></td><td>${r.agentKey}</td><td>${r.trigger}</td><td>${r.status}</td><td>${r.queuedAt}</td>
                  <td>${r.failureReason ? `${r.failureReason}: ${r.failureDetail ?? ''}` : `${JSON.stringify(r.counts)}, ${r.opportunityIds.length} opportunities`}</td></tr>`,
              )}</tbody></table>`
            : html`<p>No runs yet.</p>`
        }`);
    }
    return show(
      reply,
      s,
      'Agents',
      html`${noticeHtml(notice)}
        ${sections.length ? html`${sections}` : html`<p>The team has no sites.</p>`}`,
      status,
    );
  };

  /** The signed-in user's site and a known agent key, or the page with a 404 message. */
  const target = async (request: FastifyRequest<{ Params: AgentParams }>): Promise<{ site: SiteDoc; agentKey: AgentKey } | null> => {
    const s = request.dashboard!;
    const site = (await listSitesOfTeam(app.readModels, s.user.teamId)).find((x) => x.id === request.params.siteId);
    const agentKey = request.params.agentKey;
    return site && isAgentKey(agentKey) ? { site, agentKey } : null;
  };

  const refused = (reply: FastifyReply, s: SignedIn, error: unknown, sent?: SentForm) => {
    if (!(error instanceof ServiceError)) throw error;
    return agentsPage(reply, s, { error: error.message, ...(sent ? { sent } : {}) }, httpStatusOf(error.code));
  };

  app.get('/dashboard/agents', async function listAgentsPage(request, reply) {
    return agentsPage(reply, request.dashboard!);
  });

  app.post('/dashboard/agents/:siteId/:agentKey', async function saveAgentForm(request: FastifyRequest<{ Params: AgentParams }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return show(reply, s, 'Not allowed', html`<p class="error">Only team owners and admins can change agents.</p>`, 403);
    const found = await target(request);
    if (!found) return agentsPage(reply, s, { error: 'Site or agent not found.' }, 404);
    const form = parseForm(agentForm, request.body);
    if (!form.success) {
      const invalid = form.error.issues[0]?.path[0] === 'cadence_hours' ? 'cadence_hours' : 'settings';
      return agentsPage(reply, s, { error: firstProblem(form.error), sent: sentForm(found.site, found.agentKey, request.body, invalid) }, 400);
    }
    try {
      const body = { isActive: form.data.is_active, cadenceHours: form.data.cadence_hours, settings: form.data.settings };
      const r = await updateAgent(actingFor(app, request), { siteId: found.site.id, plan: found.site.plan, agentKey: found.agentKey, body, workSettingsSchemas: schemas() });
      await app.waitForWrite(r.position);
    } catch (error) {
      // The command refuses settings (an unknown one, a bad value) or the cadence (its range).
      const invalid = error instanceof ServiceError && /cadence/i.test(error.message) ? 'cadence_hours' : 'settings';
      return refused(reply, s, error, sentForm(found.site, found.agentKey, request.body, invalid));
    }
    return reply.redirect('/dashboard/agents', 303);
  });

  app.post('/dashboard/agents/:siteId/:agentKey/run', async function runAgentForm(request: FastifyRequest<{ Params: AgentParams }>, reply) {
    const s = request.dashboard!;
    if (!canManage(s)) return show(reply, s, 'Not allowed', html`<p class="error">Only team owners and admins can run agents.</p>`, 403);
    const found = await target(request);
    if (!found) return agentsPage(reply, s, { error: 'Site or agent not found.' }, 404);
    try {
      // As REST and MCP: queued and counted, so answered even while the read models lag (a 503 invites a second press).
      const { run } = await runAgentNow(actingFor(app, request), found.site, found.agentKey, s.user.id);
      return agentsPage(reply, s, { info: `Run ${run.id} of ${found.agentKey} queued.` }, 202);
    } catch (error) {
      return refused(reply, s, error);
    }
  });
}
