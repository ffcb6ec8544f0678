// Command executor is a custom Mesos executor written on mesos-go's v1
// executor library (api/v1/lib/executor, 0.0.6), the way a user of that
// library writes one, and used as a third-party client of clustersim's
// executor API. The agent starts it for a task with a custom ExecutorInfo;
// it reads its configuration from the MESOS_* environment the agent sets,
// subscribes at http://$MESOS_AGENT_ENDPOINT/api/v1/executor (protobuf, or
// JSON with -codec json) and then follows the events:
//
//	LAUNCH, LAUNCH_GROUP  TASK_RUNNING for each task; then, by the task's data:
//	                      "finish" (or none): TASK_FINISHED at once
//	                      "wait": keeps running until KILL or SHUTDOWN
//	                      anything else: TASK_FAILED
//	KILL                  TASK_KILLED for that task
//	MESSAGE               the same bytes sent back to the scheduler (MESSAGE call)
//	ACKNOWLEDGED          the update is forgotten, and its task counts as acknowledged
//	SHUTDOWN              TASK_KILLED for every running task, then exit
//	ERROR                 the subscription is dropped and made again
//
// Every update carries a fresh uuid and is kept until the agent acknowledges
// it. When the event stream ends, an executor of a checkpointing framework
// subscribes again with backoff (each wait at most
// MESOS_SUBSCRIPTION_BACKOFF_MAX) for up to MESOS_RECOVERY_TIMEOUT, carrying
// its unacknowledged tasks and updates; without checkpointing it exits (0).
// It exits 0 once it has launched tasks, none of them is running and every
// update has been acknowledged, or after a SHUTDOWN; 1 when it gives up.
// With MESOS_EXECUTOR_AUTHENTICATION_TOKEN set, every call carries it as a
// bearer token; with MESOS_DOMAIN_SOCKET set, every call goes over that Unix
// domain socket instead of TCP (to the same URL). It logs one line per event and call on stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/executor/events"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"
	"github.com/pborman/uuid"
)

const apiPath = "/api/v1/executor"

// firstBackoff is the wait before the first re-subscription; it doubles up
// to the configured maximum.
const firstBackoff = 100 * time.Millisecond

// errResubscribe ends an event stream on an ERROR event.
var errResubscribe = errors.New("ERROR event from the agent")

type state struct {
	cfg    config.Config
	sender calls.Sender

	active         map[string]mesos.TaskInfo       // task id -> running task
	unackedTasks   map[string]mesos.TaskInfo       // task id -> task none of whose updates is acknowledged yet
	unackedUpdates map[string]executor.Call_Update // uuid -> update not acknowledged yet
	launched       int                             // tasks received in all
	done           bool                            // nothing left to do, or SHUTDOWN: exit
}

func main() {
	codec := flag.String("codec", codecs.NameProtobuf, "protobuf or json")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)

	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatalf("cannot read the configuration from the environment: %v", err)
	}
	log.Printf("executor %s of framework %s, agent %s, checkpoint %t, codec %s",
		cfg.ExecutorID, cfg.FrameworkID, cfg.AgentEndpoint, cfg.Checkpoint, *codec)
	s := &state{
		cfg:            cfg,
		sender:         newSender(cfg, *codec),
		active:         map[string]mesos.TaskInfo{},
		unackedTasks:   map[string]mesos.TaskInfo{},
		unackedUpdates: map[string]executor.Call_Update{},
	}
	os.Exit(s.run())
}

// newSender builds the HTTP client of the executor API; every call it sends
// carries the framework and executor ids.
func newSender(cfg config.Config, codecName string) calls.Sender {
	var codec encoding.Codec
	for _, c := range codecs.ByMediaType {
		if c.Name == codecName {
			codec = c
		}
	}
	if codec.Name == "" {
		log.Fatalf("unknown codec %q: want %s or %s", codecName, codecs.NameProtobuf, codecs.NameJSON)
	}
	config := []httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second)}
	if socket := os.Getenv("MESOS_DOMAIN_SOCKET"); socket != "" {
		log.Printf("calls go over the agent's Unix domain socket %s", socket)
		config = append(config, httpcli.Transport(func(t *http.Transport) {
			t.Proxy = nil
			t.Dial = nil
			t.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socket)
			}
		}))
	}
	opts := []httpcli.Opt{
		httpcli.Endpoint("http://" + cfg.AgentEndpoint + apiPath),
		httpcli.Codec(codec),
		httpcli.Do(httpcli.With(config...)),
	}
	if token := os.Getenv("MESOS_EXECUTOR_AUTHENTICATION_TOKEN"); token != "" {
		log.Printf("calls carry the executor authentication token")
		opts = append(opts, httpcli.DefaultHeader("Authorization", "Bearer "+token))
	}
	client := httpcli.New(opts...)
	return calls.SenderWith(httpexec.NewSender(client.Send), calls.Framework(cfg.FrameworkID), calls.Executor(cfg.ExecutorID))
}

// run subscribes, and subscribes again after each disconnection as long as
// the configuration allows; it returns the exit code.
func (s *state) run() int {
	backoff := firstBackoff
	var disconnectedAt time.Time
	for {
		subscribed, err := s.subscribeOnce()
		if s.done {
			log.Printf("done: %d tasks launched, exiting", s.launched)
			return 0
		}
		log.Printf("disconnected from the agent: %v", err)
		if subscribed || disconnectedAt.IsZero() {
			disconnectedAt = time.Now()
			backoff = firstBackoff
		}
		if !s.cfg.Checkpoint && subscribed {
			log.Printf("the framework does not checkpoint: exiting")
			return 0
		}
		if !s.cfg.Checkpoint {
			log.Printf("cannot subscribe, and the framework does not checkpoint: exiting")
			return 1
		}
		if time.Since(disconnectedAt) >= s.cfg.RecoveryTimeout {
			log.Printf("not subscribed again within the recovery timeout (%s): exiting", s.cfg.RecoveryTimeout)
			return 1
		}
		if backoff > s.cfg.SubscriptionBackoffMax {
			backoff = s.cfg.SubscriptionBackoffMax
		}
		time.Sleep(backoff)
		backoff *= 2
	}
}

// subscribeOnce sends SUBSCRIBE (with what is still unacknowledged) and
// handles the events of its stream until it ends or nothing is left to do.
// It reports whether the stream began, with SUBSCRIBED.
func (s *state) subscribeOnce() (subscribed bool, err error) {
	tasks, updates := s.unacknowledged()
	log.Printf("SUBSCRIBE with %d unacknowledged tasks and %d unacknowledged updates", len(tasks), len(updates))
	resp, err := s.sender.Send(context.Background(), calls.NonStreaming(calls.Subscribe(tasks, updates)))
	if resp != nil {
		defer resp.Close()
	}
	if err != nil {
		return false, err
	}
	handler := s.handlers()
	for !s.done {
		var e executor.Event
		if err := resp.Decode(&e); err != nil {
			return subscribed, err
		}
		if !subscribed && e.GetType() != executor.Event_SUBSCRIBED {
			return false, fmt.Errorf("first event is %s, want SUBSCRIBED", e.GetType())
		}
		subscribed = true
		if err := handler.HandleEvent(context.Background(), &e); err != nil {
			return true, err
		}
		s.done = s.done || (s.launched > 0 && len(s.active) == 0 && len(s.unackedUpdates) == 0)
	}
	return subscribed, nil
}

// unacknowledged lists the unacknowledged tasks and updates in a stable order.
func (s *state) unacknowledged() ([]mesos.TaskInfo, []executor.Call_Update) {
	tasks := make([]mesos.TaskInfo, 0, len(s.unackedTasks))
	for _, id := range sortedKeys(s.unackedTasks) {
		tasks = append(tasks, s.unackedTasks[id])
	}
	updates := make([]executor.Call_Update, 0, len(s.unackedUpdates))
	for _, id := range sortedKeys(s.unackedUpdates) {
		updates = append(updates, s.unackedUpdates[id])
	}
	sort.SliceStable(updates, func(i, j int) bool {
		return updates[i].Status.GetTimestamp() < updates[j].Status.GetTimestamp()
	})
	return tasks, updates
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *state) handlers() events.Handler {
	return events.HandlerFuncs{
		executor.Event_SUBSCRIBED: func(_ context.Context, e *executor.Event) error {
			sub := e.GetSubscribed()
			log.Printf("SUBSCRIBED: executor %s of framework %s (%s) on agent %s (%s)",
				sub.ExecutorInfo.ExecutorID.Value, sub.FrameworkInfo.GetID().GetValue(), sub.FrameworkInfo.Name,
				sub.AgentInfo.GetID().GetValue(), sub.AgentInfo.Hostname)
			return nil
		},
		executor.Event_LAUNCH: func(_ context.Context, e *executor.Event) error {
			s.launch(e.GetLaunch().Task)
			return nil
		},
		executor.Event_LAUNCH_GROUP: func(_ context.Context, e *executor.Event) error {
			for _, task := range e.GetLaunchGroup().TaskGroup.Tasks {
				s.launch(task)
			}
			return nil
		},
		executor.Event_KILL: func(_ context.Context, e *executor.Event) error {
			s.kill(e.GetKill().TaskID.Value)
			return nil
		},
		executor.Event_ACKNOWLEDGED: func(_ context.Context, e *executor.Event) error {
			ack := e.GetAcknowledged()
			log.Printf("ACKNOWLEDGED: %s %s", ack.TaskID.Value, uuid.UUID(ack.UUID))
			delete(s.unackedUpdates, string(ack.UUID))
			delete(s.unackedTasks, ack.TaskID.Value)
			return nil
		},
		executor.Event_MESSAGE: func(ctx context.Context, e *executor.Event) error {
			data := e.GetMessage().Data
			log.Printf("MESSAGE: %d bytes, sent back", len(data))
			if err := calls.SendNoData(ctx, s.sender, calls.NonStreaming(calls.Message(data))); err != nil {
				log.Printf("MESSAGE call failed: %v", err)
			}
			return nil
		},
		executor.Event_SHUTDOWN: func(_ context.Context, _ *executor.Event) error {
			log.Printf("SHUTDOWN: killing %d tasks", len(s.active))
			for _, id := range sortedKeys(s.active) {
				s.kill(id)
			}
			s.done = true
			return nil
		},
		executor.Event_ERROR: func(_ context.Context, e *executor.Event) error {
			log.Printf("ERROR: %s", e.GetError().GetMessage())
			return errResubscribe
		},
	}.Otherwise(func(_ context.Context, e *executor.Event) error {
		// mesos-go 0.0.6 predates the HEARTBEAT event: in protobuf it and any
		// later type arrive here and are ignored; in JSON its decoder fails on
		// the unknown name, which ends the stream (the agent sends one every
		// 30 minutes), and the executor subscribes again or exits.
		log.Printf("event %s ignored", e.GetType())
		return nil
	})
}

// launch runs a task: TASK_RUNNING, then what its data asks for.
func (s *state) launch(task mesos.TaskInfo) {
	id := task.TaskID.Value
	log.Printf("LAUNCH %s (%q)", id, task.Data)
	s.launched++
	s.unackedTasks[id] = task
	s.active[id] = task
	s.update(task.TaskID, mesos.TASK_RUNNING, "running")
	switch string(task.Data) {
	case "", "finish":
		delete(s.active, id)
		s.update(task.TaskID, mesos.TASK_FINISHED, "finished")
	case "wait":
	default:
		delete(s.active, id)
		s.update(task.TaskID, mesos.TASK_FAILED, fmt.Sprintf("unknown task data %q: want finish or wait", task.Data))
	}
}

// kill ends a running task with TASK_KILLED; other tasks are left alone.
func (s *state) kill(id string) {
	task, running := s.active[id]
	if !running {
		log.Printf("KILL %s: not running", id)
		return
	}
	log.Printf("KILL %s", id)
	delete(s.active, id)
	s.update(task.TaskID, mesos.TASK_KILLED, "killed")
}

// update sends a status update and keeps it until it is acknowledged; one
// that cannot be sent now goes with the next SUBSCRIBE.
func (s *state) update(taskID mesos.TaskID, st mesos.TaskState, message string) {
	now := float64(time.Now().UnixNano()) / float64(time.Second)
	id := uuid.NewRandom()
	status := mesos.TaskStatus{
		TaskID:     taskID,
		State:      st.Enum(),
		Message:    &message,
		Source:     mesos.SOURCE_EXECUTOR.Enum(),
		ExecutorID: &mesos.ExecutorID{Value: s.cfg.ExecutorID},
		Timestamp:  &now,
		UUID:       id,
	}
	call := calls.Update(status)
	s.unackedUpdates[string(id)] = *call.Update
	log.Printf("UPDATE %s %s %s", taskID.Value, st, id)
	if err := calls.SendNoData(context.Background(), s.sender, calls.NonStreaming(call)); err != nil {
		log.Printf("UPDATE %s %s failed, kept for the next SUBSCRIBE: %v", taskID.Value, st, err)
	}
}
