package main

// The agent restart scenario (-executor with -agent-restart): the agent of a
// running custom executor restarts (--recover=reconnect) while one of the
// executor's updates is not acknowledged yet; the executor, its framework
// checkpointing, must subscribe again by itself and carry on:
//
//	ACCEPT go-exec-recover (data "wait") on its own executor -> 202
//	TASK_RUNNING from the executor, its acknowledgement held back
//	the agent restarts: this program prints `restart agent <id>` and waits
//	        for the runner to answer `restarted` on stdin
//	ACKNOWLEDGE the held TASK_RUNNING -> 202
//	MESSAGE to the executor, again every half second until it comes back
//	        (messages carry no delivery guarantee) -> the same bytes back
//	KILL go-exec-recover -> TASK_KILLED from the executor, which then exits
//	        (FAILURE event, status 0)
//	TEARDOWN -> 202, the event stream ends

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

const (
	recoverExecutorID = "go-executor-recover"
	recoverTask       = "go-exec-recover"
	messageAttempts   = 20
	messageWait       = 500 * time.Millisecond
)

func (r *run) agentRestartScenario(binary, codec string) {
	o := r.firstOffer()
	agent := o.GetAgentID().Value
	info := r.executorInfo(recoverExecutorID, o, binary, codec)
	launch := calls.OfferOperations{calls.OpLaunch(executorTask(recoverTask, o, info, "wait"))}
	r.holdAcks[recoverTask] = true
	r.call("ACCEPT "+recoverTask, calls.Accept(launch.WithOffers(o.GetID())).With(calls.RefuseSeconds(0)))
	r.step("ACCEPT %s on custom executor %s of %s (framework checkpointing): 202", recoverTask, recoverExecutorID, agent)

	for len(r.held) == 0 {
		r.next("the TASK_RUNNING of " + recoverTask)
	}
	running := r.held[0]
	if running.GetState() != mesos.TASK_RUNNING || running.GetSource() != mesos.SOURCE_EXECUTOR || running.GetExecutorID().GetValue() != recoverExecutorID {
		failf("first update of %s is %s from %s, executor %q; want TASK_RUNNING from SOURCE_EXECUTOR, executor %q",
			recoverTask, running.GetState(), running.GetSource(), running.GetExecutorID().GetValue(), recoverExecutorID)
	}
	r.step("%s: TASK_RUNNING from SOURCE_EXECUTOR, executor %s, acknowledgement held back", recoverTask, recoverExecutorID)

	r.restartAgent(agent)
	r.step("agent %s restarted (--recover=reconnect) under the executor", agent)

	r.holdAcks[recoverTask] = false
	for _, st := range r.held {
		r.call("ACKNOWLEDGE "+recoverTask+" "+st.GetState().String(), calls.Acknowledge(agent, recoverTask, st.GetUUID()))
		r.acked++
	}
	r.step("ACKNOWLEDGE the held %d update(s) of %s after the restart: 202", len(r.held), recoverTask)

	attempts := r.messageUntilEchoed(agent)
	r.step("MESSAGE to %s after the restart: the same bytes back (attempt %d)", recoverExecutorID, attempts)

	r.call("KILL "+recoverTask, calls.Kill(recoverTask, agent))
	r.expectExecutorUpdates(recoverTask, recoverExecutorID, mesos.TASK_KILLED)
	r.awaitExit(recoverExecutorID)
	r.teardown()
}

// restartAgent asks the runner, on stdout, to restart the agent and waits
// for its answer on stdin.
func (r *run) restartAgent(agent string) {
	fmt.Printf("restart agent %s\n", agent)
	answer := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil {
			line = "no answer: " + err.Error()
		}
		answer <- strings.TrimSpace(line)
	}()
	for {
		select {
		case got := <-answer:
			if got != "restarted" {
				failf("the runner did not restart agent %s: %s", agent, got)
			}
			return
		case ev := <-r.events:
			r.handle(ev, "the restart of agent "+agent)
		case <-r.ctx.Done():
			failf("timed out waiting for the restart of agent %s", agent)
		}
	}
}

// messageUntilEchoed sends messageData to the executor until a MESSAGE event
// brings it back, and returns the attempt that did.
func (r *run) messageUntilEchoed(agent string) int {
	for attempt := 1; attempt <= messageAttempts; attempt++ {
		seen := len(r.messages)
		r.call("MESSAGE", calls.Message(agent, recoverExecutorID, messageData))
		timer := time.NewTimer(messageWait)
		for waiting := true; waiting && len(r.messages) == seen; {
			select {
			case ev := <-r.events:
				r.handle(ev, "the MESSAGE back from "+recoverExecutorID)
			case <-timer.C:
				waiting = false
			case <-r.ctx.Done():
				failf("timed out waiting for the MESSAGE back from %s", recoverExecutorID)
			}
		}
		timer.Stop()
		if len(r.messages) > seen {
			m := r.messages[seen]
			if m.ExecutorID.Value != recoverExecutorID || !bytes.Equal(m.Data, messageData) {
				failf("MESSAGE event from executor %q carries %q; want %q from %q", m.ExecutorID.Value, m.Data, messageData, recoverExecutorID)
			}
			return attempt
		}
	}
	failf("no MESSAGE back from %s after %d attempts", recoverExecutorID, messageAttempts)
	return 0
}
