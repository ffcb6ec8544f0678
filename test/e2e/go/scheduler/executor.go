package main

// The custom executor scenario (-executor): the framework, with
// checkpointing, launches its tasks with a custom ExecutorInfo whose command
// runs the Go executor of ../executor with the same codec; the agent (in
// `--custom-executors spawn`) starts that process, which subscribes to the
// agent's executor API and runs the tasks:
//
//	ACCEPT: two tasks on one executor     -> 202
//	  go-exec-finish (data "finish")      -> TASK_RUNNING, TASK_FINISHED
//	  go-exec-wait (data "wait")          -> TASK_RUNNING
//	  each from SOURCE_EXECUTOR with the executor id, each acknowledged
//	MESSAGE to the executor (binary data) -> 202, and a MESSAGE event from
//	                                         it with the same bytes
//	KILL go-exec-wait                     -> TASK_KILLED from the executor
//	the executor, with nothing left, exits -> FAILURE event, status 0 (not
//	                                         with -external)
//	ACCEPT: go-exec-shutdown (data "wait") on a second executor -> TASK_RUNNING
//	SHUTDOWN that executor                -> 202, TASK_KILLED from the executor,
//	                                         and it exits: FAILURE event, status 0
//	TEARDOWN                              -> 202, the event stream ends

import (
	"bytes"
	"fmt"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

const (
	executorID         = "go-executor"
	shutdownExecutorID = "go-executor-shutdown"
	finishTask         = "go-exec-finish"
	waitTask           = "go-exec-wait"
	shutdownTask       = "go-exec-shutdown"
)

// messageData is sent to the executor and must come back byte for byte:
// NUL, bytes that are not UTF-8, a newline and a RecordIO-like prefix.
var messageData = []byte("\x00\xff\xfe go-e2e \x80\n12\nmessage")

// shellQuote quotes a word for /bin/sh.
func shellQuote(word string) string {
	return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
}

// executorInfo is a custom executor running the binary with the codec.
func (r *run) executorInfo(id string, o mesos.Offer, binary, codec string) mesos.ExecutorInfo {
	command := shellQuote(binary) + " -codec " + shellQuote(codec)
	shell := true
	name := "clustersim go-e2e executor"
	return mesos.ExecutorInfo{
		Type:        mesos.ExecutorInfo_CUSTOM,
		ExecutorID:  mesos.ExecutorID{Value: id},
		FrameworkID: &mesos.FrameworkID{Value: r.frameworkID},
		Name:        &name,
		Command:     &mesos.CommandInfo{Shell: &shell, Value: &command},
		Resources:   []mesos.Resource{scalar(o, "cpus", 0.1), scalar(o, "mem", 32)},
	}
}

// executorTask is a task of the executor; data tells the executor what to do.
func executorTask(id string, o mesos.Offer, executor mesos.ExecutorInfo, data string) mesos.TaskInfo {
	return mesos.TaskInfo{
		Name:      id,
		TaskID:    mesos.TaskID{Value: id},
		AgentID:   o.GetAgentID(),
		Resources: []mesos.Resource{scalar(o, "cpus", 0.2), scalar(o, "mem", 32)},
		Executor:  &executor,
		Data:      []byte(data),
	}
}

// firstOffer waits for offers and takes the one of the lowest agent id.
func (r *run) firstOffer() mesos.Offer {
	for len(r.offers) == 0 {
		r.next("an offer")
	}
	var best mesos.Offer
	for _, o := range r.offers {
		if best.GetAgentID().Value == "" || o.GetAgentID().Value < best.GetAgentID().Value {
			best = o
		}
	}
	delete(r.offers, best.GetID().Value)
	return best
}

// expectExecutorUpdates waits for the states of the task, each sent by the
// executor (source and executor id) with a uuid, and acknowledged.
func (r *run) expectExecutorUpdates(task, executor string, states ...mesos.TaskState) {
	names := make([]string, len(states))
	for i, s := range states {
		st := r.awaitState(task, s)
		switch {
		case st.GetSource() != mesos.SOURCE_EXECUTOR:
			failf("%s of %s has source %s, want SOURCE_EXECUTOR", s, task, st.GetSource())
		case st.GetExecutorID().GetValue() != executor:
			failf("%s of %s names executor %q, want %q", s, task, st.GetExecutorID().GetValue(), executor)
		case len(st.GetUUID()) != 16:
			failf("%s of %s has no uuid", s, task)
		case st.GetAgentID() == nil:
			failf("%s of %s has no agent_id", s, task)
		}
		names[i] = s.String()
	}
	r.step("%s: %s from SOURCE_EXECUTOR, executor %s, each acknowledged", task, strings.Join(names, " -> "), executor)
}

// awaitExit waits for the FAILURE event that tells the executor exited,
// which must be with status 0: it exits by itself when it has nothing left
// to do, or after SHUTDOWN. An awaited executor is no process of the
// agent's: its exit is only a broken stream, which the agent of a
// checkpointing framework takes for a disconnection, so there is nothing
// to wait for.
func (r *run) awaitExit(executor string) {
	if r.external {
		return
	}
	for {
		for _, f := range r.failures {
			if f.GetExecutorID().GetValue() != executor {
				continue
			}
			if f.Status == nil || f.GetStatus() != 0 {
				failf("FAILURE event of executor %s has status %v, want 0", executor, f.Status)
			}
			r.step("executor %s exited: FAILURE event, status 0", executor)
			return
		}
		r.next("the FAILURE event of executor " + executor)
	}
}

// started has the executor started: by the agent, or with -external by the
// runner, asked on stdout (the agent awaits it).
func (r *run) started(info mesos.ExecutorInfo, agent string) {
	if r.external {
		fmt.Printf("start executor %s of framework %s on agent %s: %s\n", info.ExecutorID.Value, r.frameworkID, agent, info.Command.GetValue())
	}
}

// awaitMessage waits for the next MESSAGE event.
func (r *run) awaitMessage() scheduler.Event_Message {
	seen := len(r.messages)
	for len(r.messages) == seen {
		r.next("a MESSAGE event")
	}
	return r.messages[seen]
}

func (r *run) executorScenario(binary, codec string) {
	o := r.firstOffer()
	agent := o.GetAgentID().Value
	info := r.executorInfo(executorID, o, binary, codec)
	launch := calls.OfferOperations{calls.OpLaunch(
		executorTask(finishTask, o, info, "finish"),
		executorTask(waitTask, o, info, "wait"),
	)}
	r.call("ACCEPT "+finishTask+" and "+waitTask, calls.Accept(launch.WithOffers(o.GetID())).With(calls.RefuseSeconds(0)))
	r.step("ACCEPT %s and %s on custom executor %s (`%s`) of %s: 202", finishTask, waitTask, executorID, info.Command.GetValue(), agent)
	r.started(info, agent)

	r.expectExecutorUpdates(finishTask, executorID, mesos.TASK_RUNNING, mesos.TASK_FINISHED)
	r.expectExecutorUpdates(waitTask, executorID, mesos.TASK_RUNNING)

	r.call("MESSAGE", calls.Message(agent, executorID, messageData))
	m := r.awaitMessage()
	switch {
	case m.AgentID.Value != agent || m.ExecutorID.Value != executorID:
		failf("MESSAGE event from agent %q, executor %q; want %q, %q", m.AgentID.Value, m.ExecutorID.Value, agent, executorID)
	case !bytes.Equal(m.Data, messageData):
		failf("MESSAGE event carries %q, want %q", m.Data, messageData)
	}
	r.step("MESSAGE of %d bytes to %s: 202, and the same bytes back in a MESSAGE event", len(messageData), executorID)

	r.call("KILL "+waitTask, calls.Kill(waitTask, agent))
	r.expectExecutorUpdates(waitTask, executorID, mesos.TASK_KILLED)
	r.awaitExit(executorID)

	r.shutdownScenario(binary, codec, agent)
	r.teardown()
}

// shutdownScenario runs a task on a second executor and shuts that executor
// down: the executor kills its task itself before it exits.
func (r *run) shutdownScenario(binary, codec, agent string) {
	o := r.awaitOffer(agent)
	info := r.executorInfo(shutdownExecutorID, o, binary, codec)
	launch := calls.OfferOperations{calls.OpLaunch(executorTask(shutdownTask, o, info, "wait"))}
	r.call("ACCEPT "+shutdownTask, calls.Accept(launch.WithOffers(o.GetID())).With(calls.RefuseSeconds(0)))
	r.step("ACCEPT %s on custom executor %s of %s: 202", shutdownTask, shutdownExecutorID, agent)
	r.started(info, agent)
	r.expectExecutorUpdates(shutdownTask, shutdownExecutorID, mesos.TASK_RUNNING)

	r.call("SHUTDOWN "+shutdownExecutorID, calls.Shutdown(shutdownExecutorID, agent))
	r.step("SHUTDOWN %s: 202", shutdownExecutorID)
	r.expectExecutorUpdates(shutdownTask, shutdownExecutorID, mesos.TASK_KILLED)
	r.awaitExit(shutdownExecutorID)
}
