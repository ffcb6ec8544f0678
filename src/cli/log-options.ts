/** The log flags the long-running commands share (`up`, `serve workflow`). */
import type { Options } from 'yargs';
import { defaultLogFormat, LOG_FORMATS, type LogFormat } from '../runtime/logging.js';
import { choiceFlag } from './flags.js';

export type { LogFormat };

/** `--log-format json|pretty`: pretty on a terminal, JSON lines otherwise. */
export function logFormatOption(): Options {
  return choiceFlag(LOG_FORMATS, {
    default: defaultLogFormat(process.stderr),
    defaultDescription: 'pretty on a terminal, else json',
    describe: 'How log lines look on stderr: json (one JSON object a line) or pretty (text for people)',
  });
}
