// Request generators and trace builders for the shipped specs, used where
// traces are made by the simulator (soundness tests, checker benchmarks)
// rather than by a spec's own `gen` block:
//   * requests: kv (specs/kv.dspec) over several keys, a register (kv on
//     one key, Jepsen-etcd style), a FIFO queue (specs/queue.dspec);
//   * SimOptions for Jepsen-style histories with crashed clients;
//   * a single injected violation (a read of a value nobody wrote);
//   * the "pending puts, then a get of an unwritten value" trace.
#ifndef DUALSWARM_ENGINE_HARNESS_WORKLOADS_H_
#define DUALSWARM_ENGINE_HARNESS_WORKLOADS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/check/observation.h"
#include "engine/harness/simulator.h"

namespace dualswarm::harness {

// Uniformly random get / put / append / cas requests of specs/kv.dspec
// over `keys` (values from {x, y, z}; a third of cas expect null).
RequestFn KvRequests(std::vector<std::string> keys);

// "k0", "k1", ..., "k<n-1>".
std::vector<std::string> KvKeys(int n);

// A register as in Jepsen's etcd test: specs/kv.dspec on the one key
// `key`, a third each of read ({"op":"get"}), write ({"op":"put"}) and
// cas; values "0".."4" (cas expects one of them, never null; the register
// starts absent, so reads return null until the first write).
RequestFn RegisterRequests(std::string key = "r");

// specs/queue.dspec: {"op":"enq","value":V} with V unique per generator
// ("e1", "e2", ... in send order; make one generator per trace) with
// probability `enq_fraction`, else {"op":"deq"}. The default (4 enq : 5 deq,
// as the spec's own gen block) keeps the queue short, so empty-queue deqs
// happen too.
RequestFn QueueRequests(double enq_fraction = 4.0 / 9.0);

// A Jepsen-style history: `clients` clients with one operation in flight
// each, `ops` operations in total, a fraction `never_answered` of them never
// answered (the client times out, closes its connection and carries on on a
// new one; the server may or may not have applied the operation), never
// truncated.
SimOptions CrashedClientsOptions(int clients, int ops, double never_answered, uint64_t seed);

// Makes a correct trace incorrect with a single violation: the response to
// one uniformly chosen answered read (a request whose "op" is in
// `read_ops`, answered with a message that has `field`) gets `field` =
// `unwritten`. That read is unexplainable for specs whose reads return only
// values (or concatenations of values) that requests carried, such as
// specs/kv.dspec and specs/queue.dspec: `unwritten` must contain a
// character that occurs in no string of any sent request, which is checked
// (FailedPrecondition otherwise). Returns the index of the changed
// observation; NotFound when the trace has no such read.
absl::StatusOr<size_t> InjectUnwrittenRead(std::vector<check::Observation>* trace, Rng& rng,
                                           const std::vector<std::string>& read_ops = {"get", "deq"},
                                           const std::string& field = "value",
                                           const std::string& unwritten = "!unwritten");

// specs/kv.dspec: `puts` concurrent puts of distinct values ("p1" ...) to
// key "x", one per connection 0 .. puts-1, all sent before any is
// answered; none is ever answered (each connection is closed, after a
// `timeout` for its put when `timeouts`); then connection `puts` sends a
// get of "x" answered with {"value": observed}. 2*puts + 2 lines (3*puts +
// 2 with timeouts). With `observed` a value no put wrote (e.g.
// "!unwritten") no execution explains the get, and a checker must rule out
// every subset and order of the pending puts before rejecting; with one of
// the put values (or null) it is accepted.
std::vector<check::Observation> PendingPutsThenGet(int puts, const ir::Value& observed, bool timeouts = false);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_WORKLOADS_H_
