/**
 * The workflow container-task service as one thing to start and stop: its
 * framework subscribed to a master, and its local API listening.
 */
import type { Logger } from 'pino';
import pino from 'pino';
import type { Encoding } from '../../client/scheduler-client.js';
import type { Pace } from '../../runtime/pace.js';
import { buildWorkflowApp } from './api.js';
import { DEFAULT_API_PORT, masterUrlsOf, type WorkflowConfig } from './config.js';
import { WorkflowScheduler } from './scheduler.js';
import { readState, writeState } from './state-file.js';

export interface WorkflowServiceOptions {
  readonly config: WorkflowConfig;
  /** Overrides the configured master (`master`), e.g. `http://127.0.0.1:5050`; several comma-separated. */
  readonly masterUrl?: string;
  /** The API's port (default 11000; 0 picks a free one). */
  readonly port?: number;
  readonly host?: string;
  readonly logger?: Logger;
  readonly encoding?: Encoding;
  /** Subscribe as this framework (fail over onto it) instead of as a new one. */
  readonly frameworkId?: string;
  /**
   * Where the service keeps its framework id, queue and tasks: read at
   * start (a restarted service fails over onto its framework, reconciles,
   * and serves what it knew), written after every change.
   */
  readonly stateFile?: string;
  /** Its timers and turns (default its own: the wall clock, acting at once). */
  readonly pace?: Pace;
  /** The framework's `user` (default the process's user). */
  readonly user?: string;
}

export interface WorkflowService {
  /** The API's base URL, e.g. `http://127.0.0.1:11000`. */
  readonly url: string;
  readonly scheduler: WorkflowScheduler;
  close(): Promise<void>;
}

export async function startWorkflowService(options: WorkflowServiceOptions): Promise<WorkflowService> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const { stateFile } = options;
  const saved = stateFile === undefined ? undefined : readState(stateFile);
  const scheduler: WorkflowScheduler = new WorkflowScheduler({
    config: options.config,
    masterUrls: masterUrlsOf(options.masterUrl ?? options.config.master, options.config.clusterSsl),
    logger,
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    ...(options.frameworkId === undefined ? {} : { frameworkId: options.frameworkId }),
    ...(options.pace === undefined ? {} : { pace: options.pace }),
    ...(options.user === undefined ? {} : { user: options.user }),
    ...(stateFile === undefined ? {} : { onChange: () => writeState(stateFile, scheduler.snapshot()) }),
  });
  if (saved !== undefined) scheduler.restore(saved);
  await scheduler.start();
  const app = buildWorkflowApp(scheduler, options.config);
  try {
    await app.listen({ port: options.port ?? DEFAULT_API_PORT, host: options.host ?? '127.0.0.1' });
  } catch (e) {
    await scheduler.close();
    throw e;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    scheduler,
    close: async () => {
      await app.close();
      await scheduler.close();
    },
  };
}
