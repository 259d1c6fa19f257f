// PropertyMonitor: steps one `property` of a spec (docs/spec-language.md:
// properties) over a trace's events and says when the trace so far
// violates it.
//
// An event is a request being sent, or a response with the request it
// answers. The monitor is the formula's automaton, built as it runs: its
// state is the formula's residual — what the events so far leave to hold
// from the next event on — obtained by progression (each temporal operator
// unrolled one event: `always F` = F now and `always F` next; `eventually
// within N F` = F now or `eventually within N-1 F` next; `F until G` = G
// now, or F now and `F until G` next). Residuals are kept simplified and
// sorted, so equal residuals are one state (Describe() is its canonical
// text: `dualswarm explore` keys its states on it).
//
// A trace that ends is judged weakly: an obligation still open (an
// eventuality whose window has not closed, a `next` after the last event,
// an `until` still waiting) is no violation; the monitor only reports a
// residual that has become false (an eventuality fails when its window
// closes). It marks a violation a missed deadline when an `eventually
// within N` window closed unfulfilled in the event that made it (an
// approximation: the window may not be the only reason). `&&`, `||` and
// `=>` evaluate their right side only when the left one leaves the
// result open, so a left condition can guard a right one.
#ifndef DUALSWARM_ENGINE_MONITOR_PROPERTY_MONITOR_H_
#define DUALSWARM_ENGINE_MONITOR_PROPERTY_MONITOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/ir/value.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"

namespace dualswarm::monitor {

struct MonitorEvent {
  ir::Value request;
  ir::Value response;  // none (ir::Value::None()) when the request is being sent
  int64_t conn = 0;
};

class PropertyMonitor {
 public:
  // Monitors spec->ast.properties[index]; the spec outlives the monitor.
  PropertyMonitor(const lang::Spec* spec, size_t index);

  // Steps on the next event. Once violated (or unknown), further events
  // change nothing. Errors: a condition that fails to evaluate or is not a
  // bool (FailedPrecondition, file:line:col), and more than
  // kMaxMonitorObligations obligations held at once (ResourceExhausted,
  // naming the limit).
  absl::Status Step(const MonitorEvent& e);

  bool violated() const;
  // A window of an `eventually within N` closed unfulfilled in the event
  // that made the violation (see above).
  bool deadline_missed() const { return deadline_missed_; }
  // A condition depended on a symbolic value: the monitor stopped judging
  // (explore counts such paths).
  bool unknown() const { return unknown_; }
  size_t events() const { return events_; }
  const lang::PropertyDecl& decl() const;
  // The residual's canonical text ("true" once nothing is left to hold).
  std::string Describe() const;

  // The residual formula (property_monitor.cc); shared, never changed.
  struct Term;
  using TermPtr = std::shared_ptr<const Term>;

 private:
  class Progress;
  const lang::Spec* spec_;
  size_t index_;
  lang::Interpreter interp_;
  TermPtr state_;
  bool deadline_missed_ = false;
  bool unknown_ = false;
  size_t events_ = 0;
};

// Every property of a spec, stepped together.
class PropertyMonitors {
 public:
  explicit PropertyMonitors(const lang::Spec* spec);
  bool empty() const { return monitors_.empty(); }
  // Steps each monitor not yet violated; errors as PropertyMonitor::Step.
  absl::Status Step(const MonitorEvent& e);
  // The first violated monitor, or null.
  const PropertyMonitor* violated() const;
  // How many stopped judging (PropertyMonitor::unknown).
  size_t unknown() const;
  // The monitors' residuals, one line each (explore's state key).
  std::string Describe() const;

 private:
  std::vector<PropertyMonitor> monitors_;
};

}  // namespace dualswarm::monitor

#endif  // DUALSWARM_ENGINE_MONITOR_PROPERTY_MONITOR_H_
