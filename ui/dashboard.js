// The dashboard's root: reads the cluster, hands the model to each panel,
// and reads it again whenever the trace says something happened (at most
// one read in flight; the next one, coalescing all events in between, waits
// at least as long as the last read took), after each clock button, and
// every few seconds in any case (a clock in real time moves without events).
import { followEvents, MasterUnreachable, readCluster } from './api.js';
import { seconds } from './format.js';
import { AgentsPanel, FrameworksPanel, OffersPanel, RolesPanel, TasksPanel } from './panels.js';
import { ClockPanel, SummaryPanel, TimelinePanel } from './live.js';
import { ChartsPanel } from './charts.js';

/** @typedef {import('./panels.js').TablePanel} TablePanel */

/** Wall-clock ms between reads when nothing happens. */
const POLL_MS = 2_000;
/** Wall-clock ms an event waits for others before the page is read again. */
const SETTLE_MS = 100;

const TABLES = {
  'cs-agents': AgentsPanel,
  'cs-frameworks': FrameworksPanel,
  'cs-roles': RolesPanel,
  'cs-offers': OffersPanel,
  'cs-tasks': TasksPanel,
};

class Dashboard extends HTMLElement {
  #reading = false;
  #again = false;
  #timer = undefined;
  #live = 'reconnecting';
  #model = undefined;
  /** The wall time of the first read the master did not answer, until one it answers. */
  #downSince = undefined;

  connectedCallback() {
    this.banner = /** @type {HTMLElement} */ (this.querySelector('.banner'));
    this.main = /** @type {HTMLElement} */ (this.querySelector('main'));
    this.summary = /** @type {SummaryPanel} */ (this.querySelector('cs-summary'));
    this.clock = /** @type {ClockPanel} */ (this.querySelector('cs-clock'));
    this.timeline = /** @type {TimelinePanel} */ (this.querySelector('cs-timeline'));
    this.charts = /** @type {ChartsPanel} */ (this.querySelector('cs-charts'));
    this.tables = Object.keys(TABLES).map((tag) => /** @type {TablePanel} */ (this.querySelector(tag)));
    this.addEventListener('cs-changed', () => this.refresh());
    followEvents({
      onEntry: (entry) => {
        this.timeline.add(entry);
        this.#soon();
      },
      onStatus: (status) => {
        this.#live = status;
        if (this.#model !== undefined) this.summary.update(this.#model, status);
      },
      onReplaced: () => {
        this.timeline.clear();
        this.charts.clear();
        this.refresh();
      },
    });
    setInterval(() => this.refresh(), POLL_MS);
    this.refresh();
  }

  #soon(delayMs = SETTLE_MS) {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.refresh();
    }, delayMs);
  }

  /** Reads the cluster and redraws; a call while a read is in flight asks for one more after it. */
  async refresh() {
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    const started = performance.now();
    try {
      this.#draw(modelOf(await readCluster()));
      this.#downSince = undefined;
      this.banner.hidden = true;
      this.main.classList.remove('stale');
    } catch (error) {
      this.#failed(error);
    } finally {
      this.#reading = false;
      if (this.#again) {
        // A big cluster's state takes long to read: wait as long again, so the page takes at most half the master's time.
        this.#again = false;
        this.#soon(Math.max(SETTLE_MS, performance.now() - started));
      }
    }
  }

  /**
   * Says why the page cannot read the cluster, and greys what it shows: the
   * figures are those of the last read that worked. A master that does not
   * answer at all is said so, with the wall time it stopped answering.
   */
  #failed(error) {
    this.main.classList.add('stale');
    this.banner.hidden = false;
    if (!(error instanceof MasterUnreachable)) {
      this.banner.textContent = `Cannot read the cluster: ${error.message}`;
      return;
    }
    this.#downSince ??= new Date();
    const asOf =
      this.#model === undefined ? '' : ` (what is shown is as of cluster time ${seconds(this.#model.clock.time_ms)})`;
    this.banner.textContent = `master unreachable since ${this.#downSince.toTimeString().slice(0, 8)}${asOf}: ${error.message}`;
  }

  #draw(model) {
    this.#model = model;
    this.summary.update(model, this.#live);
    this.clock.update(model.clock);
    for (const table of this.tables) table.update(model);
    this.charts.update(model);
    this.dataset.timeMs = String(model.clock.time_ms);
  }
}

/**
 * What the panels read: the answers, with frameworks (removed ones too) and
 * registered agents by id, the latest status of each task the operator API
 * gave (by `framework/task`), and every agent the master books in order.
 */
function modelOf({ state, roles, tasks, agents, clock }) {
  const frameworks = new Map();
  for (const fw of state.frameworks ?? []) frameworks.set(fw.id, fw);
  for (const fw of state.completed_frameworks ?? []) frameworks.set(fw.id, { ...fw, completed: true });
  const registered = new Map((state.slaves ?? []).map((agent) => [agent.id, agent]));
  const lastStatus = new Map();
  for (const list of ['tasks', 'unreachable_tasks', 'completed_tasks']) {
    for (const task of tasks[list] ?? []) {
      const status = task.statuses?.at(-1);
      if (status !== undefined) lastStatus.set(`${task.framework_id?.value}/${task.task_id?.value}`, status);
    }
  }
  return {
    state,
    roles,
    clock,
    epochMs: clock.epoch_ms,
    frameworks,
    agents: registered,
    allAgents: agents,
    lastStatus,
  };
}

customElements.define('cs-summary', SummaryPanel);
customElements.define('cs-clock', ClockPanel);
customElements.define('cs-timeline', TimelinePanel);
customElements.define('cs-charts', ChartsPanel);
for (const [tag, element] of Object.entries(TABLES)) customElements.define(tag, element);
customElements.define('cs-dashboard', Dashboard);
