"use strict";
/**
 * The command scheduler of the mesos-framework package's examples
 * (examples/commandScheduler.js), with its master taken from the
 * environment rather than written in: MESOS_MASTER (host:port), which
 * `clustersim run` sets for an external framework. It keeps INSTANCES
 * (default 2) `sleep 3600` tasks running, relaunching those that end, and
 * re-subscribes with its framework id when its connection breaks.
 */
const os = require("node:os");
const { Scheduler, Mesos } = require("mesos-framework");

const [host, port] = (process.env.MESOS_MASTER || "127.0.0.1:5050").split(":");
const mesos = Mesos.getMesos();

const scheduler = new Scheduler({
  masterUrl: host,
  port: Number(port),
  frameworkName: process.env.FRAMEWORK_NAME || "command-scheduler",
  // The library also writes its log to a file: in the temporary directory, not where the run was started.
  logging: { level: "info", path: os.tmpdir(), fileName: "clustersim-command-scheduler.log" },
  restartStates: ["TASK_FAILED", "TASK_KILLED", "TASK_LOST", "TASK_ERROR", "TASK_FINISHED", "TASK_DROPPED", "TASK_GONE"],
  tasks: {
    sleepProcesses: {
      priority: 1,
      instances: Number(process.env.INSTANCES || 2),
      // uris, environment, shell, value, arguments, user
      commandInfo: new mesos.CommandInfo(null, null, true, "sleep 3600", null, null),
      resources: { cpus: 0.2, mem: 128, ports: 0, disk: 0 },
    },
  },
});

scheduler.on("subscribed", (obj) => scheduler.logger.info(`Framework Id is ${obj.frameworkId}`));
scheduler.on("update", (update) => scheduler.logger.info(`Update: ${update.status.task_id.value} ${update.status.state}`));
scheduler.on("error", (error) => scheduler.logger.error(`ERROR: ${error.message ? error.message : JSON.stringify(error)}`));
scheduler.on("ready", () => scheduler.subscribe());
process.on("SIGTERM", () => process.exit(0));
