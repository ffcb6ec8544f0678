// Command scheduler is a small Mesos v1 HTTP scheduler written on top of the
// mesos-go library (api/v1/lib, 0.0.6) and used as a third-party client of
// clustersim. It speaks protobuf (or JSON with -codec json), walks through one
// fixed scenario and exits 0 only if every step of it was observed:
//
//	subscribe (MULTI_ROLE, one role)  -> 200 + Mesos-Stream-Id, SUBSCRIBED, HEARTBEAT
//	offers from both agents, allocated to the role
//	ACCEPT: launch `sleep 1` on agent A -> TASK_STARTING, TASK_RUNNING, TASK_FINISHED
//	DECLINE agent B's offer with refuse_seconds -> 202, and agent B is not
//	        re-offered within the window while agent A is
//	ACCEPT: launch `sleep 3600` on agent A -> TASK_RUNNING
//	RECONCILE that task explicitly       -> UPDATE TASK_RUNNING, no uuid
//	KILL it                              -> TASK_KILLED
//	TEARDOWN                             -> 202, the event stream ends
//
// Every update that carries a uuid is acknowledged as soon as it arrives.
// With -principal and -secret every request carries HTTP Basic credentials
// and the FrameworkInfo that principal. -expect names another outcome to
// check instead of the scenario:
//
//	unauthenticated  SUBSCRIBE -> 401 with WWW-Authenticate: Basic realm="mesos-master-scheduler"
//	unauthorized     SUBSCRIBE -> 200, then an ERROR event (not authorized to
//	                 use the role) first, then the event stream ends
//
// With -executor BINARY it runs the custom executor scenario of executor.go
// instead, the framework checkpointing, its tasks run by BINARY (the Go
// executor of ../executor) as the agent's child process; with -external as
// a process the runner starts, which the agent awaits; with -agent-restart
// the scenario of recovery.go.
//
// Output: one line per step; the last line is `PASS: N steps` or
// `FAIL: <reason>`.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

const (
	shortTask = "go-short"
	longTask  = "go-long"
)

// failure ends the run with a one-line reason.
type failure string

func failf(format string, args ...interface{}) { panic(failure(fmt.Sprintf(format, args...))) }

// received is what the stream reader hands to the main loop.
type received struct {
	event *scheduler.Event
	err   error
}

type run struct {
	ctx         context.Context
	caller      calls.Caller
	role        string
	frameworkID string
	events      <-chan received
	steps       int
	verbose     bool
	lastStatus  int    // HTTP status of the latest answer
	lastAuth    string // its WWW-Authenticate header
	principal   string // HTTP Basic user and FrameworkInfo.principal, if any
	secret      string
	streamEnded bool

	offers  map[string]mesos.Offer        // offer id -> outstanding offer
	history map[string][]mesos.TaskStatus // task id -> every status seen, in order
	acked   int

	declinedAgent string         // agent whose offer was declined with a filter
	declinedAt    time.Time      // when the DECLINE was answered
	reoffered     []string       // offer ids for declinedAgent seen after the decline
	offersSeen    map[string]int // agent id -> offers received

	checkpoint bool                      // FrameworkInfo.checkpoint
	messages   []scheduler.Event_Message // MESSAGE events, in order
	failures   []scheduler.Event_Failure // FAILURE events, in order
	external   bool                      // the agents await the executors: the runner starts them
	holdAcks   map[string]bool           // task id -> its updates are not acknowledged for now
	held       []mesos.TaskStatus        // updates not acknowledged because of holdAcks
}

func (r *run) step(format string, args ...interface{}) {
	r.steps++
	fmt.Printf("step %2d: %s\n", r.steps, fmt.Sprintf(format, args...))
}

// call sends a call with the framework id and fails unless it is answered
// 202 Accepted (mesos-go itself turns only 4xx/5xx answers into errors).
func (r *run) call(what string, c *scheduler.Call) {
	r.lastStatus = 0
	if err := calls.CallNoData(r.ctx, r.caller, c.With(calls.Framework(r.frameworkID))); err != nil {
		failf("%s: %v", what, err)
	}
	if r.lastStatus != http.StatusAccepted {
		failf("%s: answered %d, want 202", what, r.lastStatus)
	}
}

// next returns the next event, after its bookkeeping (see handle).
func (r *run) next(waitingFor string) *scheduler.Event {
	select {
	case got := <-r.events:
		return r.handle(got, waitingFor)
	case <-r.ctx.Done():
		failf("timed out waiting for %s", waitingFor)
	}
	return nil
}

// handle does the bookkeeping of one event: offers are stored, updates
// recorded and acknowledged, ERROR events and a broken stream are fatal.
func (r *run) handle(got received, waitingFor string) *scheduler.Event {
	if got.err != nil {
		r.streamEnded = true
		failf("event stream ended while waiting for %s: %v", waitingFor, got.err)
	}
	e := got.event
	if r.verbose {
		fmt.Printf("         event %s\n", e.String())
	}
	switch e.GetType() {
	case scheduler.Event_OFFERS:
		for _, o := range e.GetOffers().GetOffers() {
			r.offers[o.GetID().Value] = o
			agent := o.GetAgentID().Value
			r.offersSeen[agent]++
			if agent == r.declinedAgent {
				r.reoffered = append(r.reoffered, o.GetID().Value)
			}
		}
	case scheduler.Event_RESCIND:
		delete(r.offers, e.GetRescind().GetOfferID().Value)
	case scheduler.Event_UPDATE:
		st := e.GetUpdate().GetStatus()
		id := st.GetTaskID().Value
		r.history[id] = append(r.history[id], st)
		if uuid := st.GetUUID(); len(uuid) > 0 {
			if len(uuid) != 16 {
				failf("update %s of %s carries a %d-byte uuid, want 16", st.GetState(), id, len(uuid))
			}
			if r.holdAcks[id] {
				r.held = append(r.held, st)
				break
			}
			agent := ""
			if st.GetAgentID() != nil {
				agent = st.GetAgentID().Value
			}
			r.call("ACKNOWLEDGE "+id+" "+st.GetState().String(), calls.Acknowledge(agent, id, uuid))
			r.acked++
		}
	case scheduler.Event_MESSAGE:
		r.messages = append(r.messages, *e.GetMessage())
	case scheduler.Event_FAILURE:
		r.failures = append(r.failures, *e.GetFailure())
	case scheduler.Event_ERROR:
		failf("ERROR event while waiting for %s: %s", waitingFor, e.GetError().GetMessage())
	}
	return e
}

// awaitEvent reads events until one of the given type arrives.
func (r *run) awaitEvent(t scheduler.Event_Type) *scheduler.Event {
	for {
		if e := r.next(t.String()); e.GetType() == t {
			return e
		}
	}
}

// awaitState waits until the task has reached the state (already seen or not)
// and returns that status. Any other terminal state first is a failure.
func (r *run) awaitState(task string, want mesos.TaskState) mesos.TaskStatus {
	for {
		for _, st := range r.history[task] {
			if st.GetState() == want {
				return st
			}
			if terminal(st.GetState()) {
				failf("task %s ended %s (%s: %s) instead of reaching %s", task, st.GetState(), st.GetReason(), st.GetMessage(), want)
			}
		}
		r.next(task + " " + want.String())
	}
}

// awaitOffer waits for an outstanding offer from the agent and takes it.
func (r *run) awaitOffer(agent string) mesos.Offer {
	for {
		for id, o := range r.offers {
			if o.GetAgentID().Value == agent {
				delete(r.offers, id)
				return o
			}
		}
		r.next("an offer from agent " + agent)
	}
}

func terminal(s mesos.TaskState) bool {
	switch s {
	case mesos.TASK_FINISHED, mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR,
		mesos.TASK_DROPPED, mesos.TASK_GONE, mesos.TASK_GONE_BY_OPERATOR, mesos.TASK_UNKNOWN:
		return true
	}
	return false
}

// scalar returns the named scalar resource of the offer, cut down to at most
// max; the copy keeps the offer's allocation_info, as a MULTI_ROLE framework must.
func scalar(o mesos.Offer, name string, max float64) mesos.Resource {
	for _, res := range o.GetResources() {
		if res.GetName() == name && res.GetScalar() != nil {
			v := res.GetScalar().GetValue()
			if v > max {
				v = max
			}
			res.Scalar = &mesos.Value_Scalar{Value: v}
			return res
		}
	}
	failf("offer %s has no %s", o.GetID().Value, name)
	return mesos.Resource{}
}

func commandTask(id string, o mesos.Offer, command string) mesos.TaskInfo {
	shell := true
	return mesos.TaskInfo{
		Name:      id,
		TaskID:    mesos.TaskID{Value: id},
		AgentID:   o.GetAgentID(),
		Resources: []mesos.Resource{scalar(o, "cpus", 0.5), scalar(o, "mem", 64)},
		Command:   &mesos.CommandInfo{Shell: &shell, Value: &command},
	}
}

func (r *run) launch(o mesos.Offer, task, command string) {
	accept := calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask(task, o, command))}.WithOffers(o.GetID()))
	r.call("ACCEPT "+task, accept.With(calls.RefuseSeconds(0)))
}

func (r *run) expectUpdates(task string, states ...mesos.TaskState) {
	for _, s := range states {
		st := r.awaitState(task, s)
		if s != mesos.TASK_STAGING && st.GetSource() != mesos.SOURCE_EXECUTOR {
			failf("%s of %s has source %s, want SOURCE_EXECUTOR", s, task, st.GetSource())
		}
		if len(st.GetUUID()) != 16 {
			failf("%s of %s has no uuid", s, task)
		}
		if st.GetTimestamp() <= 0 || st.GetAgentID() == nil {
			failf("%s of %s has no timestamp or agent_id", s, task)
		}
	}
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = s.String()
	}
	r.step("%s: %s, each acknowledged", task, strings.Join(names, " -> "))
}

func (r *run) scenario(declineWindow time.Duration) {
	// Offers: both agents, allocated to our role.
	byAgent := map[string]mesos.Offer{}
	for len(byAgent) < 2 {
		for _, o := range r.awaitEvent(scheduler.Event_OFFERS).GetOffers().GetOffers() {
			byAgent[o.GetAgentID().Value] = o
		}
	}
	var agents []string
	for agent, o := range byAgent {
		agents = append(agents, agent)
		if got := o.GetFrameworkID().Value; got != r.frameworkID {
			failf("offer %s names framework %q, want %q", o.GetID().Value, got, r.frameworkID)
		}
		if o.GetHostname() == "" {
			failf("offer %s has no hostname", o.GetID().Value)
		}
		if got := o.GetAllocationInfo().GetRole(); got != r.role {
			failf("offer %s is allocated to role %q, want %q", o.GetID().Value, got, r.role)
		}
		for _, res := range o.GetResources() {
			if got := res.GetAllocationInfo().GetRole(); got != r.role {
				failf("resource %s of offer %s is allocated to role %q, want %q", res.GetName(), o.GetID().Value, got, r.role)
			}
		}
	}
	if agents[0] > agents[1] {
		agents[0], agents[1] = agents[1], agents[0]
	}
	agentA, agentB := agents[0], agents[1]
	offerA, offerB := r.awaitOffer(agentA), r.awaitOffer(agentB)
	r.step("OFFERS from 2 agents, every resource allocated to role %q", r.role)

	// A short task on agent A.
	r.launch(offerA, shortTask, "sleep 1")
	r.step("ACCEPT %s (`sleep 1`, 0.5 cpus, 64 mem) on %s: 202", shortTask, agentA)

	// Decline agent B for an hour.
	r.declinedAgent = agentB
	r.call("DECLINE", calls.Decline(offerB.GetID()).With(calls.RefuseSeconds(time.Hour)))
	r.declinedAt = time.Now()
	r.step("DECLINE offer of %s with refuse_seconds=3600: 202", agentB)

	r.expectUpdates(shortTask, mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_FINISHED)

	// A long task on agent A's remaining resources, offered again (refuse_seconds=0).
	offerA = r.awaitOffer(agentA)
	r.step("agent %s re-offered after ACCEPT with refuse_seconds=0", agentA)
	r.launch(offerA, longTask, "sleep 3600")
	r.expectUpdates(longTask, mesos.TASK_STARTING, mesos.TASK_RUNNING)

	// Explicit reconciliation of the running task.
	seen := len(r.history[longTask])
	r.call("RECONCILE", calls.Reconcile(calls.ReconcileTasks(map[string]string{longTask: agentA})))
	for len(r.history[longTask]) == seen {
		r.next("the reconciliation UPDATE of " + longTask)
	}
	st := r.history[longTask][seen]
	switch {
	case st.GetState() != mesos.TASK_RUNNING:
		failf("reconciliation of %s answered %s, want TASK_RUNNING", longTask, st.GetState())
	case st.GetReason() != mesos.REASON_RECONCILIATION:
		failf("reconciliation of %s has reason %s", longTask, st.GetReason())
	case st.GetSource() != mesos.SOURCE_MASTER:
		failf("reconciliation of %s has source %s, want SOURCE_MASTER", longTask, st.GetSource())
	case len(st.GetUUID()) != 0:
		failf("reconciliation update of %s carries a uuid", longTask)
	}
	r.step("RECONCILE %s: UPDATE TASK_RUNNING, REASON_RECONCILIATION, no uuid", longTask)

	r.call("KILL", calls.Kill(longTask, agentA))
	r.awaitState(longTask, mesos.TASK_KILLED)
	r.step("KILL %s: TASK_KILLED, acknowledged", longTask)

	// The declined agent stays filtered for the whole window.
	if wait := time.Until(r.declinedAt.Add(declineWindow)); wait > 0 {
		timer := time.NewTimer(wait)
		for waiting := true; waiting; {
			select {
			case got := <-r.events:
				r.handle(got, "the end of the decline window")
			case <-timer.C:
				waiting = false
			case <-r.ctx.Done():
				failf("timed out during the decline window")
			}
		}
	}
	if len(r.reoffered) > 0 {
		failf("agent %s was re-offered (%s) within %s of a DECLINE with refuse_seconds=3600", agentB, r.reoffered[0], declineWindow)
	}
	if r.offersSeen[agentA] < 2 {
		failf("agent %s was offered only %d times", agentA, r.offersSeen[agentA])
	}
	r.step("no offer from declined agent %s for %s (agent %s offered %d times)", agentB, declineWindow, agentA, r.offersSeen[agentA])
	r.teardown()
}

// teardown sends TEARDOWN and waits for the event stream to end.
func (r *run) teardown() {
	r.call("TEARDOWN", &scheduler.Call{Type: scheduler.Call_TEARDOWN})
	for !r.streamEnded {
		select {
		case got := <-r.events:
			if got.err != nil {
				r.streamEnded = true
			}
		case <-r.ctx.Done():
			failf("timed out waiting for the event stream to end after TEARDOWN")
		}
	}
	r.step("TEARDOWN: 202, event stream closed (%d updates acknowledged)", r.acked)
}

func main() {
	master := flag.String("master", "http://127.0.0.1:5050", "master URL")
	codec := flag.String("codec", "protobuf", "protobuf or json")
	role := flag.String("role", "go-e2e", "the framework's only role")
	timeout := flag.Duration("timeout", 60*time.Second, "overall time limit")
	declineWindow := flag.Duration("decline-window", 3*time.Second, "how long a declined agent must stay unoffered")
	verbose := flag.Bool("v", false, "print every event")
	principal := flag.String("principal", "", "authenticate (HTTP Basic) as this principal, and declare it in FrameworkInfo")
	secret := flag.String("secret", "", "the principal's secret")
	expect := flag.String("expect", "pass", "pass (run the scenario), unauthenticated (401) or unauthorized (ERROR event, stream closed)")
	executorBinary := flag.String("executor", "", "run the custom executor scenario instead, with this executor binary (given the same -codec)")
	external := flag.Bool("external", false, "with -executor: the agents await the executors (--custom-executors await); after each launch the scheduler prints `start executor <id> of framework <id> on agent <id>: <command>` for the runner to start it")
	agentRestart := flag.Bool("agent-restart", false, "with -executor: the executor's agent restarts under a running task (asked for on stdout, confirmed on stdin)")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	r := &run{
		ctx:        ctx,
		role:       *role,
		verbose:    *verbose,
		principal:  *principal,
		secret:     *secret,
		offers:     map[string]mesos.Offer{},
		history:    map[string][]mesos.TaskStatus{},
		holdAcks:   map[string]bool{},
		offersSeen: map[string]int{},
	}
	code := 0
	func() {
		defer func() {
			if p := recover(); p != nil {
				reason, ok := p.(failure)
				if !ok {
					panic(p)
				}
				fmt.Printf("FAIL: %s (after %d steps)\n", strings.ReplaceAll(string(reason), "\n", " "), r.steps)
				code = 1
			}
		}()
		endpoint := strings.TrimRight(*master, "/") + "/api/v1/scheduler"
		switch *expect {
		case "pass":
			if *executorBinary != "" {
				r.checkpoint = true
				r.external = *external
				r.subscribe(endpoint, *codec)
				if *agentRestart {
					r.agentRestartScenario(*executorBinary, *codec)
					break
				}
				r.executorScenario(*executorBinary, *codec)
				break
			}
			r.subscribe(endpoint, *codec)
			r.scenario(*declineWindow)
		case "unauthenticated":
			r.refusedUnauthenticated(endpoint, *codec)
		case "unauthorized":
			r.refusedUnauthorized(endpoint, *codec)
		default:
			failf("unknown -expect %q", *expect)
		}
		fmt.Printf("PASS: %d steps\n", r.steps)
	}()
	os.Exit(code)
}

// connect sends SUBSCRIBE (MULTI_ROLE, one role) and returns the answer of
// the caller: the event stream, or the error of a refused subscription.
func (r *run) connect(endpoint, codecName string) (mesos.Response, string, error) {
	mediaType := codecs.MediaTypeProtobuf
	switch codecName {
	case codecs.NameProtobuf:
	case codecs.NameJSON:
		mediaType = codecs.MediaTypeJSON
	default:
		failf("unknown codec %q", codecName)
	}
	config := []httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second)}
	if r.principal != "" {
		config = append(config, httpcli.BasicAuth(r.principal, r.secret))
	}
	client := httpcli.New(
		httpcli.Endpoint(endpoint),
		httpcli.Codec(codecs.ByMediaType[mediaType]),
		httpcli.Do(httpcli.With(config...)),
		// Remember each answer's status; every call is made from this goroutine.
		httpcli.WrapDoer(func(do httpcli.DoFunc) httpcli.DoFunc {
			return func(req *http.Request) (*http.Response, error) {
				res, err := do(req)
				if err == nil {
					r.lastStatus = res.StatusCode
					r.lastAuth = res.Header.Get("WWW-Authenticate")
				}
				return res, err
			}
		}),
	)
	r.caller = httpsched.NewCaller(client)

	info := &mesos.FrameworkInfo{
		User:         frameworkUser(),
		Name:         "clustersim-go-e2e",
		Roles:        []string{r.role},
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}},
	}
	if r.principal != "" {
		info.Principal = &r.principal
	}
	if r.checkpoint {
		info.Checkpoint = &r.checkpoint
	}
	resp, err := r.caller.Call(r.ctx, calls.Subscribe(info))
	return resp, string(mediaType), err
}

// stream reads the events of a subscription into r.events until it ends.
func (r *run) stream(resp mesos.Response) {
	go func() { <-r.ctx.Done(); resp.Close() }()
	events := make(chan received)
	r.events = events
	go func() {
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				select {
				case events <- received{err: err}:
				case <-r.ctx.Done():
				}
				return
			}
			select {
			case events <- received{event: &e}:
			case <-r.ctx.Done():
				return
			}
		}
	}()
}

// opened subscribes and reads the event stream into r.events; any answer
// but 200 fails. It returns the media type spoken.
func (r *run) opened(endpoint, codecName string) string {
	resp, mediaType, err := r.connect(endpoint, codecName)
	if err != nil {
		failf("SUBSCRIBE: %v", err)
	}
	if r.lastStatus != http.StatusOK {
		failf("SUBSCRIBE: answered %d, want 200", r.lastStatus)
	}
	r.stream(resp)
	return mediaType
}

func (r *run) subscribe(endpoint, codecName string) {
	mediaType := r.opened(endpoint, codecName)
	r.step("SUBSCRIBE (%s, MULTI_ROLE, role %q%s): 200 with a Mesos-Stream-Id", mediaType, r.role, r.as())

	sub := r.awaitEvent(scheduler.Event_SUBSCRIBED).GetSubscribed()
	r.frameworkID = sub.GetFrameworkID().Value
	if r.frameworkID == "" {
		failf("SUBSCRIBED without a framework id")
	}
	if mi := sub.GetMasterInfo(); mi == nil || mi.GetID() == "" || mi.GetPort() == 0 {
		failf("SUBSCRIBED without a complete master_info: %v", mi)
	}
	r.step("SUBSCRIBED: framework %s, heartbeat every %gs", r.frameworkID, sub.GetHeartbeatIntervalSeconds())
	r.awaitEvent(scheduler.Event_HEARTBEAT)
	r.step("HEARTBEAT")
}

// as describes the credentials of the run, for the step lines.
func (r *run) as() string {
	if r.principal == "" {
		return ""
	}
	return fmt.Sprintf(", as %q", r.principal)
}

// refusedUnauthenticated: a SUBSCRIBE without valid credentials is answered
// 401 with the scheduler realm's Basic challenge, and mesos-go reports it.
func (r *run) refusedUnauthenticated(endpoint, codecName string) {
	resp, mediaType, err := r.connect(endpoint, codecName)
	if err == nil {
		resp.Close()
		failf("SUBSCRIBE without valid credentials: answered %d, want an error", r.lastStatus)
	}
	if r.lastStatus != http.StatusUnauthorized {
		failf("SUBSCRIBE without valid credentials: answered %d (%v), want 401", r.lastStatus, err)
	}
	if want := `Basic realm="mesos-master-scheduler"`; r.lastAuth != want {
		failf("401 carries WWW-Authenticate %q, want %q", r.lastAuth, want)
	}
	r.step("SUBSCRIBE (%s%s) without valid credentials: 401, WWW-Authenticate %s (%v)", mediaType, r.as(), r.lastAuth, err)
}

// refusedUnauthorized: an authenticated SUBSCRIBE for a role the ACLs do not
// allow gets its stream, whose first event is an ERROR, and which then ends.
func (r *run) refusedUnauthorized(endpoint, codecName string) {
	mediaType := r.opened(endpoint, codecName)
	r.step("SUBSCRIBE (%s, role %q%s): 200", mediaType, r.role, r.as())
	var first received
	select {
	case first = <-r.events:
	case <-r.ctx.Done():
		failf("timed out waiting for the first event")
	}
	if first.err != nil {
		failf("the event stream ended before any event: %v", first.err)
	}
	message := first.event.GetError().GetMessage()
	if first.event.GetType() != scheduler.Event_ERROR || !strings.HasPrefix(message, "Not authorized to use roles") {
		failf("first event is %s %q, want ERROR \"Not authorized to use roles ...\"", first.event.GetType(), message)
	}
	r.step("first event: ERROR %q", message)
	select {
	case next := <-r.events:
		if next.err == nil {
			failf("event %s after the ERROR, want the stream to end", next.event.GetType())
		}
	case <-r.ctx.Done():
		failf("timed out waiting for the event stream to end after the ERROR")
	}
	r.step("the event stream ended after the ERROR")
}

// frameworkUser is the user this scheduler runs as, as real frameworks fill
// FrameworkInfo.user: the agents switch to it before they start the executor.
func frameworkUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "root"
}
