#include "engine/harness/shrinker.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "engine/harness/origin_answers.h"
#include "engine/harness/parallel_for.h"
#include "engine/ir/jexpr.h"

namespace dualswarm::harness {
namespace {

using ir::Value;

// The reruns of one shrinking pass and their budget. Candidates may be
// tried several at once (ShrinkOptions::jobs); which one is kept does not
// depend on that: of those that reproduce, always the first in order.
class ShrinkRun {
 public:
  ShrinkRun(const RerunFn& rerun, const ShrinkOptions& o) : rerun_(rerun), o_(o), seen_flaky_(o.flaky) {}

  bool OutOfBudget() const { return reruns_ >= o_.max_reruns || (o_.elapsed && o_.elapsed() > o_.max_seconds); }

  // Tries `candidate`: kept when it reproduces (*input becomes what its
  // last reproducing run sent).
  absl::StatusOr<bool> Try(const std::vector<InputItem>& candidate, std::vector<InputItem>* input) {
    auto kept = TryFirst(
        1, [&](size_t) { return candidate; }, input);
    if (!kept.ok()) return kept.status();
    return *kept >= 0;
  }

  // Tries candidate_at(0), candidate_at(1), ... (an empty candidate is
  // skipped), `jobs` at a time, up to the first that reproduces, which is
  // kept; its index, or -1 when none did (or the budget ran out).
  absl::StatusOr<int> TryFirst(size_t count, const std::function<std::vector<InputItem>(size_t)>& candidate_at,
                               std::vector<InputItem>* input) {
    const size_t jobs = static_cast<size_t>(std::max(o_.jobs, 1));
    for (size_t wave = 0; wave < count && !budget_hit(); wave += jobs) {
      // Read between waves, so that what a wave's candidates are allowed
      // does not depend on which of them ran first.
      const int attempts = Attempts();
      std::vector<std::vector<InputItem>> candidates;
      for (size_t k = wave; k < std::min(count, wave + jobs); ++k) candidates.push_back(candidate_at(k));
      std::vector<absl::StatusOr<std::optional<RerunOutcome>>> results(candidates.size());
      // The slots a wave does not fill go to confirming its candidates.
      const int parallel = static_cast<int>(jobs / candidates.size());
      ParallelFor(candidates.size(), [&](size_t i) {
        results[i] = candidates[i].empty() ? std::optional<RerunOutcome>()
                                           : Attempt(candidates[i], input->size(), parallel, attempts);
      });
      for (size_t i = 0; i < results.size(); ++i) {
        if (!results[i].ok()) return results[i].status();
        if (!results[i]->has_value()) continue;
        RerunOutcome good = std::move(**results[i]);
        *input = good.sent.empty() ? candidates[i] : good.sent;
        last_ = std::move(good);
        return static_cast<int>(wave + i);
      }
    }
    return -1;
  }

  int reruns() const { return reruns_; }
  int reproduced() const { return reproduced_; }
  bool seen_flaky() const { return seen_flaky_; }
  bool budget_hit() const { return budget_hit_; }
  RerunOutcome& last() { return last_; }
  void set_last(RerunOutcome r) { last_ = std::move(r); }

 private:
  // Reruns the candidate until it reproduced `confirm` times (its last
  // reproducing run) or failed `attempts` times (nothing), up to
  // `parallel` reruns at once (never more than are still needed to keep
  // it). Requiring repeated reproduction steers shrinking towards
  // counterexamples that replay reliably. `size` is the current input's,
  // for progress reports.
  absl::StatusOr<std::optional<RerunOutcome>> Attempt(const std::vector<InputItem>& candidate, size_t size,
                                                      int parallel, int attempts) {
    const int confirm = std::max(o_.confirm, 1);
    int ok = 0, failed = 0;
    RerunOutcome good;
    while (ok < confirm && failed < attempts) {
      const int round = std::clamp(confirm - ok, 1, std::max(parallel, 1));
      std::vector<absl::StatusOr<RerunOutcome>> runs(static_cast<size_t>(round), absl::UnknownError("not run"));
      int started = 0;
      for (; started < round && !OutOfBudget(); ++started) ++reruns_;
      if (started == 0) {
        budget_hit_ = true;
        return std::nullopt;
      }
      ParallelFor(static_cast<size_t>(started), [&](size_t i) { runs[i] = rerun_(candidate); });
      for (int i = 0; i < started; ++i) {
        auto& r = runs[static_cast<size_t>(i)];
        if (!r.ok()) return r.status();
        reproduced_ += r->reproduced;
        if (o_.on_progress) {
          std::lock_guard<std::mutex> lock(progress_mu_);
          o_.on_progress({.reruns = reruns_, .reproduced = reproduced_, .size = size, .flaky = seen_flaky_});
        }
        if (r->reproduced) {
          ++ok;
          good = std::move(*r);
        } else {
          ++failed;
        }
        if (ok > 0 && failed > 0) seen_flaky_ = true;
      }
    }
    if (ok < confirm) return std::nullopt;
    return good;
  }

  // Failed reruns that discard a candidate: one while every candidate has
  // either always or never reproduced (a deterministic failure: a second
  // try would only repeat the first), ShrinkOptions::attempts once some
  // candidate did both — or from the start with confirm 1, where none can.
  int Attempts() const { return seen_flaky_ || o_.confirm <= 1 ? std::max(o_.attempts, 1) : 1; }

  const RerunFn& rerun_;
  const ShrinkOptions& o_;
  std::atomic<int> reruns_{0};
  std::atomic<int> reproduced_{0};  // reruns that reproduced
  std::atomic<bool> budget_hit_{false};
  std::atomic<bool> seen_flaky_{false};  // some candidate both reproduced and did not
  std::mutex progress_mu_;               // one on_progress call at a time
  RerunOutcome last_;                    // touched only between waves
};

// The top of a resource's hierarchy: "e" of "e/s", "/a" of "/a/b" (what
// a request on a path inside a directory most often needs is the
// directory's other requests).
std::string TopOf(const std::string& resource) {
  const size_t slash = resource.find('/', 1);
  return slash == std::string::npos ? resource : resource.substr(0, slash);
}

// The resources other than `own` (and, when `tops`, other than own's top)
// that requests of `input` act on, the one with the most requests first;
// with `tops`, each resource stands for its top and everything under it.
std::vector<std::string> OtherResourcesBySize(const std::vector<InputItem>& input, const std::string& own, bool tops) {
  std::map<std::string, size_t> counts;
  const std::string own_group = tops ? TopOf(own) : own;
  for (const auto& item : input) {
    std::string r = ResourceOf(item);
    if (tops) r = TopOf(r);
    if (!r.empty() && r != own_group) ++counts[r];
  }
  std::vector<std::pair<size_t, std::string>> by_size;
  for (const auto& [r, n] : counts) by_size.push_back({n, r});
  std::sort(by_size.begin(), by_size.end(), std::greater<>());
  std::vector<std::string> out;
  for (auto& [n, r] : by_size) out.push_back(std::move(r));
  return out;
}

// The client request that made an intermediary send the origin request
// labelled `origin_label` (AttributeOriginRequests); -1 when none is known.
int64_t ClientRequestBehind(const std::vector<check::Observation>& trace, int64_t origin_label) {
  size_t nth = 0;  // among the origin requests
  for (const check::Observation& o : trace) {
    if (o.side != check::Side::kOrigin || o.kind != check::Observation::Kind::kReceived) continue;
    if (o.label == origin_label) {
      const std::vector<int64_t> by = AttributeOriginRequests(trace);
      return nth < by.size() ? by[nth] : -1;
    }
    ++nth;
  }
  return -1;
}

// The input position of the request the failure is about (the rejected
// response's request, the overdue one, or the client request behind a
// rejected origin request); -1 when the verdict names none.
int FailingPosition(const RerunOutcome& o, size_t input_size) {
  const int64_t label = o.verdict.origin_side ? ClientRequestBehind(o.trace, o.verdict.label) : o.verdict.label;
  if (label < 1) return -1;
  size_t pos = static_cast<size_t>((label - 1) / 2);
  return pos < input_size ? static_cast<int>(pos) : -1;
}

// Simpler variants of one request, most aggressive first.
std::vector<InputItem> Simplifications(const InputItem& item) {
  std::vector<InputItem> out;
  if (item.is_fault()) return out;  // a fault is kept or dropped whole (steps 1 and 2)
  // `item` on connection `conn` with request `jexpr`.
  auto variant = [&item](int conn, Value jexpr) {
    InputItem v = item;
    v.conn = conn;
    v.jexpr = std::move(jexpr);
    return v;
  };
  if (item.conn != 0) out.push_back(variant(0, item.jexpr));
  const Value& j = item.jexpr;
  if (!j.is_map()) return out;
  if (const Value* h = j.Find("headers"); h && h->is_map()) {
    for (const auto& [k, v] : h->as_map()) out.push_back(variant(item.conn, j.Set("headers", h->Remove(k))));
  }
  for (const auto& [k, v] : j.as_map()) {
    if (!v.is_string() || v.as_string().empty()) continue;
    if (k == "method" || k == "path" || k == "op" || k == "key" || k == "call") continue;  // identity, not payload
    out.push_back(variant(item.conn, j.Set(k, Value::String(""))));
    if (v.as_string().size() > 1)
      out.push_back(variant(item.conn, j.Set(k, Value::String(v.as_string().substr(0, v.as_string().size() / 2)))));
  }
  return out;
}

}  // namespace

Value RelabelRefs(const Value& j, const std::vector<int>& new_pos) {
  if (ir::IsQuoted(j)) return j;
  if (ir::IsHole(j)) {
    auto ref = ir::ParseJRef(j.Find("$ref")->as_string());
    if (!ref.ok() || ref->label < 1) return j;
    size_t pos = static_cast<size_t>((ref->label - 1) / 2);
    if (pos >= new_pos.size() || new_pos[pos] < 0) return j;
    ref->label = 2 * static_cast<int64_t>(new_pos[pos]) + 1 + (ref->label - 1) % 2;
    return j.Set("$ref", Value::String(ir::JRefToString(*ref)));
  }
  if (j.is_map()) {
    Value out = j;
    for (const auto& [k, v] : j.as_map())
      if (ir::HasHoles(v)) out = out.Set(k, RelabelRefs(v, new_pos));
    return out;
  }
  if (j.is_list()) {
    std::vector<Value> items;
    for (const auto& v : j.as_list()) items.push_back(RelabelRefs(v, new_pos));
    return Value::List(std::move(items));
  }
  return j;
}

std::vector<InputItem> Without(const std::vector<InputItem>& input, const std::vector<bool>& drop) {
  std::vector<int> new_pos(input.size(), -1);
  std::vector<int> last_kept_before(input.size(), -1);  // the new position of the last kept request before k
  int kept = 0;
  for (size_t k = 0; k < input.size(); ++k) {
    last_kept_before[k] = kept - 1;
    if (!drop[k]) new_pos[k] = kept++;
  }
  std::vector<InputItem> out;
  out.reserve(static_cast<size_t>(kept));
  for (size_t k = 0; k < input.size(); ++k) {
    if (drop[k]) continue;
    InputItem item = input[k];  // a fault item stays one
    std::vector<int> after;
    for (int p : input[k].after) {
      if (p < 0 || static_cast<size_t>(p) >= input.size()) continue;
      int q = new_pos[static_cast<size_t>(p)] >= 0 ? new_pos[static_cast<size_t>(p)]
                                                   : last_kept_before[static_cast<size_t>(p)];
      if (q >= 0 && std::find(after.begin(), after.end(), q) == after.end()) after.push_back(q);
    }
    item.jexpr = RelabelRefs(item.jexpr, new_pos);
    item.after = std::move(after);
    out.push_back(std::move(item));
  }
  return out;
}

std::string ResourceOf(const InputItem& item) {
  if (item.is_fault() || !item.jexpr.is_map()) return "";
  for (const char* field : {"path", "key"})
    if (const Value* v = item.jexpr.Find(field); v && v->is_string()) return v->as_string();
  return "";
}

std::vector<InputItem> OneAtATime(const std::vector<InputItem>& input) {
  std::vector<InputItem> out = input;
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].after.clear();
    if (k > 0) out[k].after.push_back(static_cast<int>(k) - 1);
  }
  return out;
}

std::vector<InputItem> InResponseOrder(const std::vector<InputItem>& input,
                                       const std::vector<check::Observation>& trace) {
  constexpr size_t kUnanswered = SIZE_MAX;
  std::vector<size_t> answered_at(input.size(), kUnanswered);  // index in trace of item k's response
  for (size_t i = 0; i < trace.size(); ++i) {
    const check::Observation& o = trace[i];
    if (o.side != check::Side::kClient || o.kind != check::Observation::Kind::kReceived || o.label < 2) continue;
    const size_t k = static_cast<size_t>((o.label - 2) / 2);
    if (k < input.size() && answered_at[k] == kUnanswered) answered_at[k] = i;
  }
  // Sort keys: a response's place; one with none sorts right behind the
  // request before it (the second part keeps their send order).
  std::vector<std::pair<size_t, size_t>> key(input.size());
  for (size_t k = 0; k < input.size(); ++k)
    key[k] = answered_at[k] != kUnanswered ? std::make_pair(answered_at[k], size_t{0})
             : k > 0                       ? std::make_pair(key[k - 1].first, key[k - 1].second + 1)
                                           : std::make_pair(size_t{0}, size_t{0});
  std::vector<size_t> order(input.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
  std::vector<int> new_pos(input.size());
  for (size_t p = 0; p < order.size(); ++p) new_pos[order[p]] = static_cast<int>(p);
  std::vector<InputItem> out;
  out.reserve(input.size());
  for (size_t k : order) {
    InputItem item = input[k];
    item.jexpr = RelabelRefs(item.jexpr, new_pos);
    out.push_back(std::move(item));
  }
  return OneAtATime(out);
}

bool Overlapping(const std::vector<InputItem>& input) {
  for (size_t k = 1; k < input.size(); ++k)
    if (std::find(input[k].after.begin(), input[k].after.end(), static_cast<int>(k) - 1) == input[k].after.end())
      return true;
  return false;
}

absl::StatusOr<ShrinkResult> Shrink(const std::vector<InputItem>& failing, const RerunOutcome& original,
                                    const RerunFn& rerun, const ShrinkOptions& options) {
  ShrinkRun run(rerun, options);
  run.set_last(original);
  std::vector<InputItem> input = original.sent.empty() ? failing : original.sent;

  // 0. One request at a time (each waits for the previous response), on
  // the same connections, in the order they were sent, else in the order
  // their responses arrived: if the failure survives that, the server's
  // order is fixed and every later candidate replays deterministically.
  // (Step 3 then tries moving everything onto one connection.)
  auto try_one_at_a_time = [&]() -> absl::Status {
    if (input.size() < 2 || !Overlapping(input)) return absl::OkStatus();
    auto ok = run.Try(OneAtATime(input), &input);
    if (!ok.ok()) return ok.status();
    if (!*ok && !run.budget_hit()) {
      // In the order the effects happened (a late answer stored last).
      std::vector<InputItem> by_response = InResponseOrder(input, run.last().trace);
      if (by_response != OneAtATime(input)) {
        ok = run.Try(by_response, &input);
        if (!ok.ok()) return ok.status();
      }
    }
    if (*ok) {
      // What was sent keeps the waits the run observed; restore the chain.
      for (size_t k = 1; k < input.size(); ++k)
        if (std::find(input[k].after.begin(), input[k].after.end(), static_cast<int>(k) - 1) == input[k].after.end())
          input[k].after.push_back(static_cast<int>(k) - 1);
    }
    return absl::OkStatus();
  };
  if (auto s = try_one_at_a_time(); !s.ok()) return s;

  // 1. Drop the requests on every other resource (path or key) than the
  // failing request's at once (and, when that fails, also with the rest
  // one at a time in response order); when the failure needs some of
  // them, drop each other resource in turn, the one with the most
  // requests first (when there are few: ddmin does better with many). One
  // rerun where ddmin would need many. A failure that needed concurrency
  // may survive one request at a time once the other resources' traffic
  // is gone, so step 0 is tried again.
  if (int failing = FailingPosition(run.last(), input.size()); failing >= 0 && !run.budget_hit()) {
    const std::string own = ResourceOf(input[static_cast<size_t>(failing)]);
    bool dropped = false;
    // Drops the requests on `resources` (with `tops`: on anything under them).
    auto drop_resources = [&](const std::set<std::string>& resources, bool tops) -> absl::Status {
      std::vector<bool> drop(input.size());
      for (size_t k = 0; k < input.size(); ++k) {
        const std::string r = ResourceOf(input[k]);
        drop[k] = resources.count(tops ? TopOf(r) : r) > 0;
      }
      auto ok = run.Try(Without(input, drop), &input);
      if (!ok.ok()) return ok.status();
      dropped |= *ok;
      return absl::OkStatus();
    };
    if (auto others = OtherResourcesBySize(input, own, false); !others.empty()) {
      const std::set<std::string> all_others(others.begin(), others.end());
      if (auto s = drop_resources(all_others, false); !s.ok()) return s;
      // A concurrent failure that did not survive the drop may still be
      // a sequential one on its own resource: its requests one at a time
      // in the order their responses arrived.
      if (!dropped && Overlapping(input) && !run.budget_hit()) {
        std::vector<InputItem> by_response = InResponseOrder(input, run.last().trace);
        std::vector<bool> drop(by_response.size());
        for (size_t k = 0; k < by_response.size(); ++k) drop[k] = all_others.count(ResourceOf(by_response[k])) > 0;
        auto ok = run.Try(Without(by_response, drop), &input);
        if (!ok.ok()) return ok.status();
        dropped |= *ok;
      }
      // One resource at a time; when there are many, one top at a time
      // (a file tree's top-level names), the largest first.
      constexpr size_t kMaxOneByOne = 8;
      const bool tops = others.size() > kMaxOneByOne;
      const std::vector<std::string> groups = tops ? OtherResourcesBySize(input, own, true) : others;
      if (!dropped && groups.size() > 1)
        for (size_t g = 0; g < std::min(groups.size(), kMaxOneByOne) && !run.budget_hit(); ++g)
          if (auto s = drop_resources({groups[g]}, tops); !s.ok()) return s;
    }
    if (dropped && !run.budget_hit())
      if (auto s = try_one_at_a_time(); !s.ok()) return s;
  }

  // 2. ddmin over the request list: try dropping each of n chunks.
  size_t n = 2;
  while (input.size() >= 2 && !run.budget_hit()) {
    const size_t chunk = (input.size() + n - 1) / n;
    const size_t chunks = (input.size() + chunk - 1) / chunk;
    auto without_chunk = [&](size_t c) {
      std::vector<bool> drop(input.size());
      const size_t start = c * chunk, end = std::min(input.size(), start + chunk);
      std::fill(drop.begin() + static_cast<std::ptrdiff_t>(start), drop.begin() + static_cast<std::ptrdiff_t>(end),
                true);
      return Without(input, drop);
    };
    auto kept = run.TryFirst(chunks, without_chunk, &input);
    if (!kept.ok()) return kept.status();
    if (*kept >= 0) {
      n = std::max<size_t>(n - 1, 2);
    } else {
      if (n >= input.size()) break;
      n = std::min(input.size(), n * 2);
    }
  }

  // 3. Everything on one connection: the server then takes the requests in
  // a fixed order, which makes the counterexample replay deterministically.
  if (!run.budget_hit()) {
    std::vector<InputItem> one = input;
    bool differs = false;
    for (auto& item : one) {
      differs |= item.conn != 0;
      item.conn = 0;
    }
    if (differs) {
      auto ok = run.Try(one, &input);
      if (!ok.ok()) return ok.status();
    }
  }

  // 4. Simplify each request; keep a change when the failure survives it.
  for (size_t i = 0; i < input.size() && !run.budget_hit(); ++i) {
    for (bool changed = true; changed && !run.budget_hit() && i < input.size();) {
      const std::vector<InputItem> simpler = Simplifications(input[i]);
      auto with_simpler = [&](size_t k) {
        std::vector<InputItem> candidate = input;
        candidate[i] = simpler[k];
        return candidate;
      };
      auto kept = run.TryFirst(simpler.size(), with_simpler, &input);
      if (!kept.ok()) return kept.status();
      changed = *kept >= 0;
    }
  }

  ShrinkResult res;
  res.input = std::move(input);
  res.last = std::move(run.last());
  res.reruns = run.reruns();
  res.reproduced = run.reproduced();
  res.complete = !run.budget_hit();
  res.seen_flaky = run.seen_flaky();
  return res;
}

}  // namespace dualswarm::harness
