// Command mesos-go-service is a small long-running service scheduler on
// mesos-go's v1 library, as Debian packages it (golang-github-mesos-mesos-go-dev
// 0.0.6), in the shape of the library's own example scheduler: the
// subscription loop, its re-subscription after a broken stream, the redirect
// to a new leading master and the acknowledgement of updates are the
// library's (extras/scheduler/controller, httpcli/httpsched, eventrules,
// callrules), not this program's.
//
// It keeps INSTANCES (default 3) command tasks (`sleep 3600`) running,
// launches another for each that ends, reconciles its tasks after every
// SUBSCRIBED, and declines what it does not need. Its master is
// CLUSTERSIM_MASTER_URL (http://host:port) or MESOS_MASTER (host:port),
// which `clustersim run` sets. It subscribes as FRAMEWORK_NAME (default
// mesos-go-service) with a failover timeout of a week, so the controller
// subscribes again with its framework id. It logs each step on stderr.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/backoff"
	"github.com/mesos/mesos-go/api/v1/lib/extras/scheduler/callrules"
	"github.com/mesos/mesos-go/api/v1/lib/extras/scheduler/controller"
	"github.com/mesos/mesos-go/api/v1/lib/extras/scheduler/eventrules"
	"github.com/mesos/mesos-go/api/v1/lib/extras/store"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/events"
)

const (
	taskCpus = 0.2
	taskMem  = 64
	command  = "sleep 3600"
	// The controller's pace of (re)subscription: at most one attempt a second, backing off to 4 s.
	subscribeMinBackoff = 1 * time.Second
	subscribeMaxBackoff = 4 * time.Second
	// Declined offers come back after this long; a task that ends revives them at once.
	refuse = 30 * time.Second
)

// service is the scheduler's state. The controller hands it one event at a
// time, from one goroutine: it needs no lock.
type service struct {
	name      string
	cli       calls.Caller
	instances int
	launched  int               // tasks launched so far, for the next task id
	live      map[string]string // task id -> agent id, for each task launched and not ended
}

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("mesos-go-service: ")
	instances, err := strconv.Atoi(env("INSTANCES", "3"))
	if err != nil || instances < 1 {
		log.Fatalf("INSTANCES: want a positive number, got %q", os.Getenv("INSTANCES"))
	}
	endpoint := masterURL() + "/api/v1/scheduler"
	log.Printf("master %s, %d instances", endpoint, instances)
	s := &service{name: env("FRAMEWORK_NAME", "mesos-go-service"), instances: instances, live: map[string]string{}}

	frameworkID := store.DecorateSingleton(
		store.NewInMemorySingleton(),
		store.DoSet().AndThen(func(_ store.Setter, v string, _ error) error {
			log.Printf("framework id %s", v)
			return nil
		}))
	// Protobuf, the library's default codec; redirects to the leader are httpsched's. A call that
	// fails while the stream is still open (an acknowledgement a standby answers 503) ends the
	// controller's event loop without a broken stream: AllowReconnection lets the next SUBSCRIBE
	// through then, instead of "already subscribed" for ever.
	client := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))))
	caller := httpsched.NewCaller(client, httpsched.AllowReconnection(true))
	s.cli = callrules.New(callrules.WithFrameworkID(store.GetIgnoreErrors(frameworkID))).Caller(caller)

	ctx := context.Background()
	err = controller.Run(ctx, s.frameworkInfo(), s.cli,
		controller.WithEventHandler(s.handler(frameworkID)),
		controller.WithFrameworkID(store.GetIgnoreErrors(frameworkID)),
		controller.WithRegistrationTokens(backoff.Notifier(subscribeMinBackoff, subscribeMaxBackoff, ctx.Done())),
		controller.WithSubscriptionTerminated(func(err error) {
			switch {
			case err == nil:
				log.Print("subscription ended")
			case err == io.EOF:
				log.Print("subscription ended: the stream ended")
			default:
				log.Printf("subscription ended: %v", err)
			}
			if _, ok := err.(controller.StateError); ok {
				log.Fatalf("giving up: %v", err)
			}
		}),
	)
	log.Fatalf("controller stopped: %v", err)
}

func env(name, otherwise string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return otherwise
}

func masterURL() string {
	if url := os.Getenv("CLUSTERSIM_MASTER_URL"); url != "" {
		return url
	}
	return "http://" + env("MESOS_MASTER", "127.0.0.1:5050")
}

func (s *service) frameworkInfo() *mesos.FrameworkInfo {
	failover := (7 * 24 * time.Hour).Seconds()
	return &mesos.FrameworkInfo{User: env("USER", "root"), Name: s.name, FailoverTimeout: &failover}
}

// handler is the library's rule chain: ERROR events lifted into errors (the
// controller then subscribes again), each update acknowledged before this
// program sees it, the framework id kept from SUBSCRIBED.
func (s *service) handler(frameworkID store.Singleton) events.Handler {
	logged := controller.LogEvents(func(e *scheduler.Event) { log.Printf("event %s", e.GetType()) })
	return eventrules.New(controller.LiftErrors().DropOnError()).Handle(events.Handlers{
		scheduler.Event_SUBSCRIBED: eventrules.New(
			logged,
			controller.TrackSubscription(frameworkID, 7*24*time.Hour),
		).HandleF(s.subscribed),
		scheduler.Event_OFFERS: eventrules.HandleF(s.offers),
		scheduler.Event_UPDATE: controller.AckStatusUpdates(s.cli).AndThen().HandleF(s.update),
		scheduler.Event_FAILURE: logged.HandleF(func(_ context.Context, e *scheduler.Event) error {
			log.Printf("failure of agent %s", e.GetFailure().GetAgentID().GetValue())
			return nil
		}),
	}.Otherwise(logged.HandleEvent))
}

// subscribed asks for the state of every task it knows (explicit
// reconciliation), then of all (implicit), as the reconciliation guide says.
func (s *service) subscribed(ctx context.Context, e *scheduler.Event) error {
	log.Printf("subscribed as %s", e.GetSubscribed().GetFrameworkID().GetValue())
	if len(s.live) > 0 {
		if err := calls.CallNoData(ctx, s.cli, calls.Reconcile(calls.ReconcileTasks(s.live))); err != nil {
			log.Printf("reconcile: %v", err)
		}
	}
	if err := calls.CallNoData(ctx, s.cli, calls.Reconcile()); err != nil {
		log.Printf("reconcile: %v", err)
	}
	return nil
}

// offers launches the tasks missing into the offers that fit them and declines the rest.
func (s *service) offers(ctx context.Context, e *scheduler.Event) error {
	for _, offer := range e.GetOffers().GetOffers() {
		cpus, mem := scalar(offer.Resources, "cpus"), scalar(offer.Resources, "mem")
		var tasks []mesos.TaskInfo
		for len(s.live) < s.instances && cpus >= taskCpus && mem >= taskMem {
			tasks = append(tasks, s.task(offer.AgentID))
			cpus, mem = cpus-taskCpus, mem-taskMem
		}
		if len(tasks) == 0 {
			if err := calls.CallNoData(ctx, s.cli, calls.Decline(offer.ID).With(calls.RefuseSeconds(refuse))); err != nil {
				log.Printf("decline: %v", err)
			}
			continue
		}
		accept := calls.Accept(calls.OfferOperations{calls.OpLaunch(tasks...)}.WithOffers(offer.ID))
		if err := calls.CallNoData(ctx, s.cli, accept); err != nil {
			// The master took none of them: they are not live, and the offers they need may be filtered.
			log.Printf("accept: %v", err)
			for _, t := range tasks {
				delete(s.live, t.TaskID.Value)
			}
			s.revive(ctx)
		}
	}
	return nil
}

func (s *service) task(agent mesos.AgentID) mesos.TaskInfo {
	s.launched++
	id := fmt.Sprintf("%s-%d", s.name, s.launched)
	s.live[id] = agent.Value
	value, shell := command, true
	log.Printf("launching %s on %s", id, agent.Value)
	return mesos.TaskInfo{
		Name:      id,
		TaskID:    mesos.TaskID{Value: id},
		AgentID:   agent,
		Command:   &mesos.CommandInfo{Value: &value, Shell: &shell},
		Resources: []mesos.Resource{resource("cpus", taskCpus), resource("mem", taskMem)},
	}
}

// update follows a task's state (the update is acknowledged already); one that ended is replaced.
func (s *service) update(ctx context.Context, e *scheduler.Event) error {
	status := e.GetUpdate().GetStatus()
	id, state := status.TaskID.Value, status.GetState()
	if status.Reason != nil {
		log.Printf("task %s %s (%s)", id, state, status.GetReason())
	} else {
		log.Printf("task %s %s", id, state)
	}
	if !terminal(state) {
		s.live[id] = status.GetAgentID().GetValue()
		return nil
	}
	if _, known := s.live[id]; !known {
		return nil
	}
	delete(s.live, id)
	s.revive(ctx)
	return nil
}

// revive asks for offers again, past the filters of the offers it declined.
func (s *service) revive(ctx context.Context) {
	if err := calls.CallNoData(ctx, s.cli, calls.Revive()); err != nil {
		log.Printf("revive: %v", err)
	}
}

func terminal(state mesos.TaskState) bool {
	switch state {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_UNKNOWN:
		return true
	}
	return false
}

func scalar(resources []mesos.Resource, name string) float64 {
	sum := 0.0
	for _, r := range resources {
		if r.Name == name && r.Scalar != nil {
			sum += r.Scalar.Value
		}
	}
	return sum
}

func resource(name string, value float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: value}}
}
