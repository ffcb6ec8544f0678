// The dashboard's live parts: the header's summary, the clock with its
// buttons (virtual time only), and the event timeline fed by the trace's
// server-sent events.
import { advance, runUntilIdle } from './api.js';
import { counted, h, seconds, shortId } from './format.js';

/** Entries the timeline keeps; older ones drop off its end. */
const MAX_TIMELINE_ENTRIES = 300;
/** Entries a folded line of offer churn keeps (its count goes on). */
const MAX_CHURN_ENTRIES = 100;

/** The advance button's steps, in ms. */
const STEPS = [
  [100, '100 ms'],
  [1_000, '1 s'],
  [5_000, '5 s'],
  [15_000, '15 s'],
  [60_000, '1 min'],
  [600_000, '10 min'],
];

export class SummaryPanel extends HTMLElement {
  update(model, live) {
    const { state } = model;
    this.replaceChildren(
      h('span', { title: state.id ?? '' }, `master ${state.hostname ?? ''}:${state.leader_info?.port ?? ''}`),
      h('span', {}, `version ${state.version ?? '?'}`),
      h(
        'span',
        {},
        counted((state.slaves ?? []).length, 'agent'),
        state.unreachable_slaves > 0 ? ` (${state.unreachable_slaves} unreachable)` : '',
      ),
      h('span', {}, counted((state.frameworks ?? []).length, 'framework')),
      h('span', { class: `live ${live}`, 'data-live': live }, live === 'live' ? 'events live' : 'events reconnecting'),
    );
  }
}

/**
 * The cluster's clock, and in virtual time the buttons that move it: advance
 * by the step chosen, or run until only heartbeats, pings and retries are
 * left. A click disables the buttons until the master answers; the answer's
 * time is shown at once, then the page is read again (`cs-changed`).
 */
export class ClockPanel extends HTMLElement {
  connectedCallback() {
    if (this.time !== undefined) return;
    this.time = h('output', { class: 'clock-time', 'data-time-ms': '' }, '—');
    this.mode = h('span', { class: 'clock-mode' });
    this.step = h(
      'select',
      { name: 'step', 'aria-label': 'Advance by' },
      ...STEPS.map(([ms, label]) => h('option', { value: ms, selected: ms === 1_000 }, label)),
    );
    this.advanceButton = h('button', { type: 'button', name: 'advance' }, 'Advance');
    this.idleButton = h('button', { type: 'button', name: 'run-until-idle' }, 'Run until idle');
    this.result = h('span', { class: 'clock-result', role: 'status' });
    this.controls = h('span', { class: 'clock-controls' }, this.step, this.advanceButton, this.idleButton);
    this.append(
      h('span', { class: 'clock-label' }, 'cluster time '),
      this.time,
      ' ',
      this.mode,
      this.controls,
      this.result,
    );
    this.advanceButton.addEventListener('click', () =>
      this.#act(
        () => advance(Number(this.step.value)),
        (r) => `advanced to ${seconds(r.time_ms)}`,
      ),
    );
    this.idleButton.addEventListener('click', () =>
      this.#act(runUntilIdle, (r) => `${r.idle ? 'idle' : 'still busy'} at ${seconds(r.time_ms)}`),
    );
  }

  update(clock) {
    this.#show(clock.time_ms);
    const virtual = clock.mode === 'virtual';
    this.mode.textContent = virtual ? 'virtual time' : 'real time';
    this.controls.hidden = !virtual;
  }

  #show(timeMs) {
    this.time.dataset.timeMs = String(timeMs);
    this.time.textContent = seconds(timeMs);
  }

  async #act(call, describe) {
    this.advanceButton.disabled = this.idleButton.disabled = true;
    try {
      const answer = await call();
      this.#show(answer.time_ms);
      this.result.textContent = describe(answer);
      this.result.classList.remove('error');
    } catch (error) {
      this.result.textContent = error.message;
      this.result.classList.add('error');
    } finally {
      this.advanceButton.disabled = this.idleButton.disabled = false;
      this.dispatchEvent(new CustomEvent('cs-changed', { bubbles: true }));
    }
  }
}

/**
 * The trace as it comes, newest first, with a filter on the entry's kind and
 * text. The inputs a cluster records for its replay (`input:<method>`) are
 * hidden unless asked for: what they did follows them in the trace.
 */
export class TimelinePanel extends HTMLElement {
  connectedCallback() {
    if (this.list !== undefined) return;
    this.filter = h('input', {
      type: 'search',
      name: 'filter',
      placeholder: 'filter: task:status, offer, agent…',
      'aria-label': 'Filter the timeline',
    });
    this.inputs = h('input', { type: 'checkbox', name: 'inputs' });
    this.list = h('ol', { class: 'timeline', reversed: true });
    this.filter.addEventListener('input', () => this.#applyFilter());
    this.inputs.addEventListener('change', () => this.#applyFilter());
    const inputs = h('label', { class: 'show-inputs' }, this.inputs, ' recorded inputs');
    this.append(h('section', {}, h('h2', {}, 'Event timeline ', this.filter, inputs), this.list));
  }

  add(entry) {
    const prefix = `${entry.time_ms} ${entry.kind} `;
    const text = entry.line.startsWith(prefix) ? entry.line.slice(prefix.length) : entry.line;
    const item = h(
      'li',
      { 'data-seq': entry.seq, 'data-kind': entry.kind, 'data-time-ms': entry.time_ms },
      h('time', {}, seconds(entry.time_ms)),
      h('span', { class: 'kind' }, entry.kind),
      h('code', { class: 'data' }, shortenIds(text)),
    );
    item.hidden = !this.#matches(item);
    if (isChurn(entry)) return this.#addChurn(item);
    this.list.prepend(item);
    while (this.list.childElementCount > MAX_TIMELINE_ENTRIES) this.list.lastElementChild.remove();
  }

  clear() {
    this.list.replaceChildren();
  }

  /**
   * Offers made, declined, rescinded or timed out, one after the other,
   * go into one line that says how many and when, folded until clicked.
   */
  #addChurn(item) {
    // The recorded inputs between (hidden unless asked for) do not break a run of churn: they join it.
    const inputs = [];
    let group = /** @type {HTMLElement | null} */ (this.list.firstElementChild);
    while (group?.dataset.kind.startsWith('input:')) {
      inputs.push(group);
      group = /** @type {HTMLElement | null} */ (group.nextElementSibling);
    }
    if (group === null || !group.classList.contains('churn')) {
      group = churnGroup();
      inputs.length = 0;
      this.list.prepend(group);
      while (this.list.childElementCount > MAX_TIMELINE_ENTRIES) this.list.lastElementChild.remove();
    }
    const entries = group.querySelector('ol');
    entries.prepend(item, ...inputs);
    while (entries.childElementCount > MAX_CHURN_ENTRIES) entries.lastElementChild.remove();
    const count = Number(group.dataset.count) + (item.dataset.kind.startsWith('input:') ? 0 : 1);
    group.dataset.count = String(count);
    group.dataset.firstMs ??= item.dataset.timeMs;
    const first = Number(group.dataset.firstMs);
    const last = Number(item.dataset.timeMs);
    group.querySelector('time').textContent = seconds(last);
    group.querySelector('.data').textContent =
      `${counted(count, 'offer and decline event')}${first === last ? '' : ` from ${seconds(first)}`}`;
    group.hidden = !this.#anyShown(group);
  }

  #matches(item) {
    if (!this.inputs.checked && item.dataset.kind.startsWith('input:')) return false;
    const needle = this.filter.value.trim().toLowerCase();
    return needle === '' || item.textContent.toLowerCase().includes(needle);
  }

  #anyShown(group) {
    return [...group.querySelectorAll('li')].some((item) => !item.hidden);
  }

  #applyFilter() {
    for (const item of this.list.querySelectorAll('li[data-seq]')) {
      /** @type {HTMLElement} */ (item).hidden = !this.#matches(item);
    }
    for (const group of this.list.querySelectorAll('li.churn')) {
      /** @type {HTMLElement} */ (group).hidden = !this.#anyShown(group);
    }
  }
}

/** The trace kinds of offers coming and going, and a recorded DECLINE call (an input). */
const CHURN_KINDS = new Set([
  'offer:create',
  'offer:remove',
  'offer:rescind',
  'offer:timeout',
  'offer:decline-invalid',
  'event:offers',
  'event:rescind',
  'call:decline',
]);

const isChurn = (entry) =>
  CHURN_KINDS.has(entry.kind) || (entry.kind === 'input:call' && entry.line.includes('"type":"DECLINE"'));

/** A folded line of offer churn: its newest time, how many, and the entries behind a button. */
function churnGroup() {
  const entries = h('ol', { class: 'churn-entries', hidden: true });
  const toggle = h('button', { type: 'button', class: 'churn-toggle', 'aria-expanded': 'false' }, 'show');
  toggle.addEventListener('click', () => {
    entries.hidden = !entries.hidden;
    toggle.setAttribute('aria-expanded', String(!entries.hidden));
    toggle.textContent = entries.hidden ? 'show' : 'hide';
  });
  return h(
    'li',
    { class: 'churn', 'data-kind': 'offers', 'data-count': 0 },
    h('time', {}),
    h('span', { class: 'kind' }, 'offers ', toggle),
    h('code', { class: 'data' }),
    entries,
  );
}

/** Long generated ids in trace text, shortened as the tables show them. */
function shortenIds(text) {
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-[A-Z]*\d+)?/g, (id) =>
    shortId(id),
  );
}
