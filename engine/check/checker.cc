#include "engine/check/checker.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/check/search.h"
#include "engine/check/trace_validator.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"
#include "engine/lang/loc.h"
#include "engine/monitor/law_monitor.h"
#include "engine/monitor/property_monitor.h"

namespace dualswarm::check {

// Routes observations to one search per partition (P-compositionality: a
// spec may declare `partition q => KEY;` when requests with different keys
// touch disjoint state; checking the parts separately is exponentially
// cheaper). Without a declaration everything is one partition.
struct Checker::Impl {
  struct Part {
    TraceValidator validator;
    std::unique_ptr<Search> search;
  };

  std::shared_ptr<const lang::Spec> spec;
  CheckerOptions opts;
  lang::Interpreter interp;
  sym::Solver solver;
  TraceValidator global;
  std::map<std::string, Part> parts;
  std::unordered_map<int64_t, Part*> part_of_label;
  Verdict verdict;
  std::vector<ir::Value> initial;
  WorkClock clock;
  bool holding = false;        // append only; Release() explains
  std::vector<Part*> pending;  // parts with observations not yet explained
  // The trace's fault events so far, when the spec has `on fault` (each is
  // then a step of every part: AppendFault), and the steps given to parts.
  std::vector<Observation> faults;
  uint64_t fault_steps = 0;
  // The spec's properties (engine/monitor), stepped on each request sent
  // and each response with its request; the requests not answered yet by
  // label; what a monitor decided, adopted once the search is up to date
  // (AdoptMonitorVerdict); and the observations seen.
  monitor::PropertyMonitors monitors;
  // An interface's laws (docs/interfaces.md), judged on the library calls
  // that carry the tester's law tag.
  monitor::LawMonitor laws;
  struct Unanswered {
    int64_t conn;
    ir::Value request;
  };
  std::unordered_map<int64_t, Unanswered> unanswered;  // by request label
  std::optional<Verdict> monitor_verdict;
  size_t observed = 0;

  Impl(std::shared_ptr<const lang::Spec> s, const CheckerOptions& o)
      : spec(std::move(s)),
        opts(o),
        interp(spec.get()),
        solver(o.solver_timeout_ms),
        initial(spec->initial_globals),
        clock(o.max_seconds),
        monitors(spec.get()),
        laws(spec.get()) {}

  // A verdict a monitor reaches at observation o (index `at`).
  static Verdict MonitorVerdictAt(const Observation& o, size_t at) {
    Verdict v;
    v.obs_index = at;
    v.observation = o;
    return v;
  }
  // A monitor that failed: a bound it names (INCONCLUSIVE) or a spec bug.
  static void FailedMonitor(const absl::Status& s, Verdict* v) {
    v->kind = absl::IsResourceExhausted(s) ? Verdict::Kind::kInconclusive : Verdict::Kind::kSpecError;
    v->message = std::string(s.message());
  }

  // Steps the monitors on client-side observation o (validated): a request
  // sent, or a response with the request it answers.
  void StepMonitors(const Observation& o) {
    const size_t at = observed++;
    if (monitor_verdict || o.side != Side::kClient) return;
    if (!laws.empty()) StepLaws(o, at);
    if (monitors.empty() || monitor_verdict) return;
    monitor::MonitorEvent e;
    e.conn = o.conn;
    if (o.kind == Observation::Kind::kSent) {
      unanswered[o.label] = {o.conn, o.msg};
      e.request = o.msg;
      e.response = ir::Value::None();
    } else if (o.kind == Observation::Kind::kReceived) {
      auto it = unanswered.find(o.label - 1);
      if (it == unanswered.end()) return;  // cannot happen after validation
      e.request = std::move(it->second.request);
      unanswered.erase(it);
      e.response = o.msg;
    } else {
      // Not events. A closed connection's requests are never answered.
      if (o.kind == Observation::Kind::kClosed)
        std::erase_if(unanswered, [&](const auto& u) { return u.second.conn == o.conn; });
      return;
    }
    absl::Status s = monitors.Step(e);
    Verdict v = MonitorVerdictAt(o, at);
    if (!s.ok()) {
      FailedMonitor(s, &v);
    } else if (const monitor::PropertyMonitor* m = monitors.violated()) {
      const lang::PropertyDecl& p = m->decl();
      const std::string where = lang::FormatLoc(spec->file, p.loc);
      v.kind = Verdict::Kind::kReject;
      v.property = p.name;
      v.deadline_missed = m->deadline_missed();
      v.message = absl::StrCat("property '", p.name, "' (", where, ") is violated by ",
                               o.kind == Observation::Kind::kSent ? "request" : "response", " label ", o.label,
                               " on conn ", o.conn, v.deadline_missed ? ": an `eventually within` window closed" : "",
                               o.line ? absl::StrCat(" (trace line ", o.line, ")") : "");
      v.reasons.push_back(DeathReason{absl::StrCat("property '", p.name, "' cannot hold any more after ", m->events(),
                                                   m->events() == 1 ? " event" : " events"),
                                      absl::StrCat("property:", p.name),
                                      {},
                                      where});
    } else {
      return;
    }
    monitor_verdict = std::move(v);
  }

  // Steps the law monitor on client-side observation o (index `at`).
  void StepLaws(const Observation& o, size_t at) {
    absl::Status s = absl::OkStatus();
    if (o.kind == Observation::Kind::kSent) s = laws.Sent(o.label, o.msg);
    if (o.kind == Observation::Kind::kReceived) s = laws.Received(o.label - 1, o.msg);
    Verdict v = MonitorVerdictAt(o, at);
    if (!s.ok()) {
      FailedMonitor(s, &v);
    } else if (const monitor::LawViolation* law = laws.violation()) {
      const std::string where = lang::FormatLoc(spec->file, law->law->loc);
      v.kind = Verdict::Kind::kReject;
      v.property = law->law->name;
      v.message = absl::StrCat("property '", law->law->name, "' (", where, ") is violated for ", law->args, ": ",
                               law->why, " (law run ", law->run, ", response label ", o.label,
                               o.line ? absl::StrCat(", trace line ", o.line) : "", ")");
      v.reasons.push_back(
          DeathReason{absl::StrCat("the calls: ", law->calls), absl::StrCat("property:", law->law->name), {}, where});
    } else {
      return;
    }
    monitor_verdict = std::move(v);
  }

  // A monitor's verdict becomes the checker's once every observation up to
  // it is explained: the spec's own rejection of one of them comes first.
  // The searches may have deferred work (CheckerOptions::
  // defer_when_stalled), so they finish here (observations after the
  // violation never reach them: Observe); an explanation of a prefix
  // failing is a rejection of the trace.
  void AdoptMonitorVerdict() {
    if (holding || !monitor_verdict || verdict.kind != Verdict::Kind::kAccept) return;
    Finish();
    if (verdict.kind == Verdict::Kind::kAccept) verdict = *monitor_verdict;
  }

  absl::StatusOr<Part*> PartFor(const Observation& o) {
    std::string key;
    if (spec->ast.has_partition) {
      auto k = interp.PartitionKey(o.msg);
      if (!k.ok()) return k.status();
      key = k->ToString();
    }
    auto it = parts.find(key);
    if (it == parts.end()) {
      auto model = MakeNetworkModel(opts.network);
      if (!model.ok()) return model.status();
      Part p;
      p.search = std::make_unique<Search>(spec, opts, std::move(*model), &solver, &clock);
      it = parts.emplace(key, std::move(p)).first;
      // The faults before its first request happened to its state too.
      for (size_t k = 0; k < faults.size(); ++k) AppendFault(&it->second, faults[k], k);
    }
    return &it->second;
  }

  // Fault k of the trace as a step of part p (docs/checker.md: faults):
  // a request on a connection of its own (below every trace connection,
  // labels below every trace label) that is sent, answered and closed at
  // the event, so the server takes it after every request answered before
  // the event and before every request sent after it. Its step runs the
  // `on fault` handler, and the answer is the event itself (Search).
  void AppendFault(Part* p, const Observation& fault, size_t k) {
    if (++fault_steps > opts.max_fault_steps && verdict.kind == Verdict::Kind::kAccept) {
      verdict.kind = Verdict::Kind::kInconclusive;
      verdict.message = absl::StrCat("more than ", opts.max_fault_steps,
                                     " fault steps (fault events times partitions; limit: fault steps)");
    }
    if (fault_steps > opts.max_fault_steps) return;
    const int64_t label = -3 - 2 * static_cast<int64_t>(k);
    const int64_t conn = -1 - static_cast<int64_t>(k);
    auto with = [&](Observation::Kind kind, int64_t l) {
      Observation o = fault;
      o.kind = kind;
      o.label = l;
      o.conn = conn;
      return o;
    };
    for (Observation o : {with(Observation::Kind::kSent, label), with(Observation::Kind::kReceived, label + 1),
                          with(Observation::Kind::kClosed, 0)}) {
      absl::StatusOr<int> ch = p->validator.Accept(o);
      if (!ch.ok()) {  // cannot happen: a connection and labels of its own
        verdict.kind = Verdict::Kind::kInconclusive;
        verdict.message = absl::StrCat("internal error: fault step ", k, ": ", ch.status().message());
        return;
      }
      // The event is the trace's (the search's mark of a fault step); its
      // answer and close are made up.
      const bool event = o.kind == Observation::Kind::kSent;
      if (event) o.kind = Observation::Kind::kFault;
      p->search->Append(std::move(o), *ch, event ? Search::Origin::kTrace : Search::Origin::kMadeUp);
    }
  }

  absl::Status Observe(Observation o) {
    if (o.side == Side::kOrigin && !interp.HasOriginRole())
      return absl::InvalidArgumentError(absl::StrCat(o.line ? absl::StrCat("line ", o.line, ": ") : "",
                                                     "an observation on the origin side, but spec '", spec->name,
                                                     "' has no origin role (it is not an intermediary's spec)"));
    auto ch = global.Accept(o);
    if (!ch.ok()) return ch.status();
    // After a property's violation the searches are given nothing more:
    // what decides is the trace up to it (AdoptMonitorVerdict).
    if (monitor_verdict) return absl::OkStatus();
    StepMonitors(o);
    // An interface's spec without a model: the laws are the whole judge.
    if (!interp.HasClientHandler()) return absl::OkStatus();
    std::vector<Part*> targets;
    if (o.side == Side::kOrigin) {  // a spec with an origin role has no partitions (spec-language.md)
      auto p = PartFor(o);
      if (!p.ok()) return p.status();
      targets.push_back(*p);
    } else {
      switch (o.kind) {
        case Observation::Kind::kSent: {
          auto p = PartFor(o);
          if (!p.ok()) {
            verdict.kind = Verdict::Kind::kSpecError;
            verdict.message = std::string(p.status().message());
            return absl::OkStatus();
          }
          part_of_label[o.label] = *p;
          targets.push_back(*p);
          break;
        }
        case Observation::Kind::kReceived:
          targets.push_back(part_of_label.at(o.label - 1));
          break;
        case Observation::Kind::kTimeout:
          targets.push_back(part_of_label.at(o.label));
          break;
        case Observation::Kind::kClosed:
          for (auto& [k, p] : parts) targets.push_back(&p);
          break;
        case Observation::Kind::kFault:
          // Without `on fault`, what a fault may do is the network's business
          // (docs/trace-format.md); with it, a step of every part.
          if (!interp.HasFaultHandler()) break;
          faults.push_back(o);
          for (auto& [k, p] : parts) {
            AppendFault(&p, o, faults.size() - 1);
            targets.push_back(&p);
          }
          return ExplainOrHold(targets);
      }
    }
    for (Part* p : targets) {
      auto pch = p->validator.Accept(o);
      if (!pch.ok()) return pch.status();  // cannot happen after the global check
      p->search->Append(o, *pch);
    }
    return ExplainOrHold(targets);
  }

  // Explains what the parts were just given, or keeps them for Release().
  absl::Status ExplainOrHold(const std::vector<Part*>& targets) {
    for (Part* p : targets) {
      if (holding) {
        if (std::find(pending.begin(), pending.end(), p) == pending.end()) pending.push_back(p);
        continue;
      }
      if (!Explain(p)) break;
    }
    return absl::OkStatus();
  }

  // Advances one part's search; false once the verdict is in.
  bool Explain(Part* p) {
    p->search->Advance();
    if (p->search->verdict().kind == Verdict::Kind::kAccept) return true;
    verdict = p->search->verdict();
    return false;
  }

  void Release() {
    holding = false;
    for (Part* p : pending)
      if (!Explain(p)) break;
    pending.clear();
  }

  void Finish() {
    Release();
    for (auto& [key, p] : parts) {
      if (verdict.kind != Verdict::Kind::kAccept) return;
      p.search->Finish();
      if (p.search->verdict().kind != Verdict::Kind::kAccept) verdict = p.search->verdict();
    }
  }
};

std::string ServerOrderEntry(int64_t label) {
  return label >= kOriginLabelBase ? absl::StrCat("o", label - kOriginLabelBase) : absl::StrCat(label);
}

namespace {

void AppendServerOrder(const std::vector<int64_t>& order, absl::string_view sep, bool json, std::string* out) {
  for (size_t k = 0; k < order.size(); ++k) {
    if (k) out->append(sep.data(), sep.size());
    const std::string e = ServerOrderEntry(order[k]);
    if (json && order[k] >= kOriginLabelBase)
      absl::StrAppend(out, "\"", e, "\"");
    else
      out->append(e);
  }
}

}  // namespace

Checker::Checker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Checker::~Checker() = default;

absl::StatusOr<std::unique_ptr<Checker>> Checker::Create(std::shared_ptr<const lang::Spec> spec,
                                                         const CheckerOptions& options) {
  auto model = MakeNetworkModel(options.network);
  if (!model.ok()) return model.status();
  if (options.max_frontier == 0) return absl::InvalidArgumentError("max_frontier must be positive");
  if (options.max_memo == 0) return absl::InvalidArgumentError("max_memo must be positive");
  if (options.max_seconds < 0) return absl::InvalidArgumentError("max_seconds must not be negative");
  return std::unique_ptr<Checker>(new Checker(std::make_unique<Impl>(std::move(spec), options)));
}

absl::Status Checker::Observe(Observation o) {
  if (impl_->verdict.kind != Verdict::Kind::kAccept) return absl::OkStatus();
  impl_->clock.Start();
  absl::Status s = impl_->Observe(std::move(o));
  impl_->AdoptMonitorVerdict();
  impl_->clock.Stop();
  return s;
}

void Checker::Hold() { impl_->holding = true; }

void Checker::Release() {
  if (impl_->verdict.kind != Verdict::Kind::kAccept) return;
  impl_->clock.Start();
  impl_->Release();
  impl_->AdoptMonitorVerdict();
  impl_->clock.Stop();
}

void Checker::Finish() {
  if (impl_->verdict.kind != Verdict::Kind::kAccept) return;
  impl_->clock.Start();
  impl_->Finish();
  impl_->AdoptMonitorVerdict();
  impl_->clock.Stop();
}

const Verdict& Checker::verdict() const { return impl_->verdict; }

CheckerStats Checker::stats() const {
  CheckerStats s;
  for (const auto& [k, p] : impl_->parts) {
    const CheckerStats& x = p.search->stats();
    s.observations += x.observations;
    s.handler_runs += x.handler_runs;
    s.steps_reused += x.steps_reused;
    s.inert_steps_skipped += x.inert_steps_skipped;
    s.probes += x.probes;
    s.probe_rejections += x.probe_rejections;
    s.closure_states += x.closure_states;
    s.restarts += x.restarts;
    s.yields += x.yields;
    s.repairs += x.repairs;
    s.explanations += x.explanations;
    s.backtracks += x.backtracks;
    s.memo_hits += x.memo_hits;
    s.frontier += p.search->frontier();
    s.memo_entries += p.search->memo_size();
    s.max_frontier_seen = std::max(s.max_frontier_seen, x.max_frontier_seen);
  }
  s.solver = impl_->solver.stats();
  s.check_seconds = impl_->clock.spent_seconds();
  s.max_observe_seconds = impl_->clock.max_call_seconds();
  s.partitions = impl_->parts.size();
  for (const lang::LawDecl& law : impl_->spec->ast.laws) {
    LawTally t;
    t.name = law.name;
    if (auto it = impl_->laws.counts().find(law.name); it != impl_->laws.counts().end()) {
      t.passed = it->second.passed;
      t.aborted = it->second.aborted;
      t.violated = it->second.violated;
      t.set_aside = it->second.set_aside;
    }
    s.laws.push_back(std::move(t));
  }
  return s;
}

std::vector<ir::Value> Checker::ModelState() const {
  std::vector<ir::Value> merged = impl_->initial;
  for (const auto& [k, p] : impl_->parts) {
    const auto& g = *p.search->current().globals;
    for (size_t i = 0; i < merged.size() && i < g.size(); ++i) {
      const ir::Value& init = impl_->initial[i];
      if (g[i] == init) continue;
      if (g[i].is_map() && init.is_map() && merged[i].is_map()) {
        for (const auto& [key, v] : g[i].as_map()) {
          const ir::Value* before = init.Find(key);
          if (before == nullptr || *before != v) merged[i] = merged[i].Set(key, v);
        }
        for (const auto& [key, v] : init.as_map())
          if (g[i].Find(key) == nullptr) merged[i] = merged[i].Remove(key);
      } else {
        merged[i] = g[i];
      }
    }
  }
  return merged;
}

std::vector<int32_t> Checker::CoveredBranches() const {
  std::vector<bool> covered(impl_->spec->branches.size(), false);
  for (const auto& [k, p] : impl_->parts) p.search->MarkCoveredBranches(&covered);
  std::vector<int32_t> ids;
  for (size_t i = 0; i < covered.size(); ++i)
    if (covered[i]) ids.push_back(static_cast<int32_t>(i));
  return ids;
}

const char* BranchOrderName(BranchOrder o) {
  switch (o) {
    case BranchOrder::kFirst:
      return "first";
    case BranchOrder::kLast:
      return "last";
    case BranchOrder::kRandom:
      return "random";
    case BranchOrder::kMostConstrained:
      return "most-constrained";
  }
  return "?";
}

absl::StatusOr<BranchOrder> ParseBranchOrder(absl::string_view name) {
  for (BranchOrder o : {BranchOrder::kFirst, BranchOrder::kLast, BranchOrder::kRandom, BranchOrder::kMostConstrained})
    if (name == BranchOrderName(o)) return o;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown branch order \"", name, "\" (known: first, last, random, most-constrained)"));
}

const char* VerdictKindName(Verdict::Kind k) {
  switch (k) {
    case Verdict::Kind::kAccept:
      return "accept";
    case Verdict::Kind::kReject:
      return "reject";
    case Verdict::Kind::kInconclusive:
      return "inconclusive";
    case Verdict::Kind::kSpecError:
      return "spec-error";
  }
  return "?";
}

absl::StatusOr<Verdict> CheckTrace(std::shared_ptr<const lang::Spec> spec, const std::vector<Observation>& trace,
                                   const CheckerOptions& options, CheckerStats* stats) {
  auto checker = Checker::Create(std::move(spec), options);
  if (!checker.ok()) return checker.status();
  // The whole trace is known: explaining it with every observation in hand
  // lets the search drop explanations that contradict later responses at
  // once (same verdict, less work).
  (*checker)->Hold();
  for (const auto& o : trace) {
    absl::Status s = (*checker)->Observe(o);
    if (!s.ok()) return s;
    if ((*checker)->verdict().kind != Verdict::Kind::kAccept) break;
  }
  (*checker)->Finish();
  if (stats) *stats = (*checker)->stats();
  return (*checker)->verdict();
}

std::string FormatVerdict(const Verdict& v) {
  switch (v.kind) {
    case Verdict::Kind::kAccept:
      return "ACCEPT: every observation is explained by the spec\n";
    case Verdict::Kind::kInconclusive:
      return absl::StrCat("INCONCLUSIVE: ", v.message, "\n");
    case Verdict::Kind::kSpecError:
      return absl::StrCat("SPEC ERROR: ", v.message, "\n");
    case Verdict::Kind::kReject:
      break;
  }
  std::string out = absl::StrCat("REJECT: ", v.message, "\n  observed: ", ir::ToJson(v.observation.msg), "\n");
  if (v.reasons.empty()) return out;
  absl::StrAppend(&out, "  why each remaining explanation died:\n");
  int i = 0;
  for (const auto& r : v.reasons) {
    absl::StrAppend(&out, "  ", ++i, ". server order [");
    AppendServerOrder(r.server_order, ", ", false, &out);
    absl::StrAppend(&out, "]: ", r.text, r.spec_loc.empty() ? "" : absl::StrCat("  (", r.spec_loc, ")"), "\n");
  }
  return out;
}

std::string VerdictToJson(const Verdict& v, const CheckerStats* stats) {
  std::string out = absl::StrCat("{\"verdict\":\"", VerdictKindName(v.kind), "\",\"message\":");
  ir::AppendJsonString(v.message, &out);
  if (v.kind == Verdict::Kind::kReject) {
    if (!v.property.empty()) {
      out += ",\"property\":";
      ir::AppendJsonString(v.property, &out);
      absl::StrAppend(&out, ",\"deadline_missed\":", v.deadline_missed ? "true" : "false");
    }
    absl::StrAppend(&out, ",\"observation\":", ObservationToJson(v.observation), ",\"trace_line\":", v.observation.line,
                    ",\"reasons\":[");
    bool first = true;
    for (const auto& r : v.reasons) {
      if (!first) out += ",";
      first = false;
      out += "{\"text\":";
      ir::AppendJsonString(r.text, &out);
      out += ",\"field\":";
      ir::AppendJsonString(r.field, &out);
      out += ",\"server_order\":[";
      AppendServerOrder(r.server_order, ",", true, &out);
      out += "],\"spec_loc\":";
      ir::AppendJsonString(r.spec_loc, &out);
      absl::StrAppend(&out, ",\"mismatched_fields\":", r.mismatched_fields, "}");
    }
    out += "]";
  }
  if (stats) {
    absl::StrAppend(&out, ",\"stats\":{\"observations\":", stats->observations,
                    ",\"handler_runs\":", stats->handler_runs, ",\"steps_reused\":", stats->steps_reused,
                    ",\"inert_steps_skipped\":", stats->inert_steps_skipped, ",\"explanations\":", stats->explanations,
                    ",\"backtracks\":", stats->backtracks, ",\"memo_hits\":", stats->memo_hits,
                    ",\"probes\":", stats->probes, ",\"probe_rejections\":", stats->probe_rejections,
                    ",\"closure_states\":", stats->closure_states, ",\"restarts\":", stats->restarts,
                    ",\"yields\":", stats->yields, ",\"repairs\":", stats->repairs,
                    ",\"memo_entries\":", stats->memo_entries, ",\"max_frontier\":", stats->max_frontier_seen,
                    ",\"solver_checks\":", stats->solver.checks, ",\"z3_calls\":", stats->solver.z3_calls,
                    ",\"z3_seconds\":", stats->solver.z3_seconds, ",\"check_seconds\":", stats->check_seconds,
                    ",\"max_observe_seconds\":", stats->max_observe_seconds, "}");
  }
  out += "}";
  return out;
}

}  // namespace dualswarm::check
