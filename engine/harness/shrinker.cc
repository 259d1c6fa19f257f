#include "engine/harness/shrinker.h"

#include <algorithm>

#include "absl/status/status.h"
#include "engine/ir/jexpr.h"

namespace dualswarm::harness {
namespace {

using ir::Value;

class ShrinkRun {
 public:
  ShrinkRun(const RerunFn& rerun, const ShrinkOptions& o) : rerun_(rerun), o_(o) {}

  bool OutOfBudget() const { return reruns_ >= o_.max_reruns || (o_.elapsed && o_.elapsed() > o_.max_seconds); }

  // Reruns the candidate until it reproduced `confirm` times (kept: *input
  // becomes what the last reproducing run sent) or failed `attempts` times
  // (discarded). Requiring repeated reproduction steers shrinking towards
  // counterexamples that replay reliably.
  absl::StatusOr<bool> Try(const std::vector<InputItem>& candidate, std::vector<InputItem>* input) {
    int ok = 0, failed = 0;
    RerunOutcome good;
    while (ok < std::max(o_.confirm, 1) && failed < std::max(o_.attempts, 1)) {
      if (OutOfBudget()) {
        budget_hit_ = true;
        return false;
      }
      ++reruns_;
      auto r = rerun_(candidate);
      if (!r.ok()) return r.status();
      if (o_.on_progress) o_.on_progress(reruns_, input->size());
      if (r->reproduced) {
        ++ok;
        good = std::move(*r);
      } else {
        ++failed;
      }
    }
    if (ok < std::max(o_.confirm, 1)) return false;
    *input = good.sent.empty() ? candidate : good.sent;
    last_ = std::move(good);
    return true;
  }

  int reruns() const { return reruns_; }
  bool budget_hit() const { return budget_hit_; }
  RerunOutcome& last() { return last_; }
  void set_last(RerunOutcome r) { last_ = std::move(r); }

 private:
  const RerunFn& rerun_;
  const ShrinkOptions& o_;
  int reruns_ = 0;
  bool budget_hit_ = false;
  RerunOutcome last_;
};

// Request k (0-based) of an input has label 2k+1 and its response 2k+2.
// After requests [start, end) are removed, references to later messages
// move down; references into the removed range stay (and are then
// resolved loosely).
Value ShiftLabels(const Value& j, size_t start, size_t end) {
  if (ir::IsQuoted(j)) return j;
  if (ir::IsHole(j)) {
    auto ref = ir::ParseJRef(j.Find("$ref")->as_string());
    if (!ref.ok()) return j;
    size_t pos = static_cast<size_t>((ref->label - 1) / 2);
    if (pos < end) return j;
    ref->label -= static_cast<int64_t>(2 * (end - start));
    return j.Set("$ref", Value::String(ir::JRefToString(*ref)));
  }
  if (j.is_map()) {
    Value out = j;
    for (const auto& [k, v] : j.as_map())
      if (ir::HasHoles(v)) out = out.Set(k, ShiftLabels(v, start, end));
    return out;
  }
  if (j.is_list()) {
    std::vector<Value> items;
    for (const auto& v : j.as_list()) items.push_back(ShiftLabels(v, start, end));
    return Value::List(std::move(items));
  }
  return j;
}

// Simpler variants of one request, most aggressive first.
std::vector<InputItem> Simplifications(const InputItem& item) {
  std::vector<InputItem> out;
  if (item.is_fault()) return out;  // a fault is kept or dropped whole (step 1)
  if (item.conn != 0) out.push_back({0, item.jexpr, item.after});
  const Value& j = item.jexpr;
  if (!j.is_map()) return out;
  if (const Value* h = j.Find("headers"); h && h->is_map()) {
    for (const auto& [k, v] : h->as_map()) out.push_back({item.conn, j.Set("headers", h->Remove(k)), item.after});
  }
  for (const auto& [k, v] : j.as_map()) {
    if (!v.is_string() || v.as_string().empty()) continue;
    if (k == "method" || k == "path" || k == "op" || k == "key") continue;  // identity, not payload
    out.push_back({item.conn, j.Set(k, Value::String("")), item.after});
    if (v.as_string().size() > 1)
      out.push_back(
          {item.conn, j.Set(k, Value::String(v.as_string().substr(0, v.as_string().size() / 2))), item.after});
  }
  return out;
}

}  // namespace

std::vector<InputItem> OneAtATime(const std::vector<InputItem>& input) {
  std::vector<InputItem> out = input;
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].after.clear();
    if (k > 0) out[k].after.push_back(static_cast<int>(k) - 1);
  }
  return out;
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
  // the same connections: if the failure survives that, the server's order
  // is fixed and every later candidate replays deterministically. (Step 2
  // then tries moving everything onto one connection.)
  if (input.size() > 1) {
    auto ok = run.Try(OneAtATime(input), &input);
    if (!ok.ok()) return ok.status();
    if (*ok) {
      // What was sent keeps the waits the run observed; restore the chain.
      for (size_t k = 1; k < input.size(); ++k)
        if (std::find(input[k].after.begin(), input[k].after.end(), static_cast<int>(k) - 1) == input[k].after.end())
          input[k].after.push_back(static_cast<int>(k) - 1);
    }
  }

  // 1. ddmin over the request list: try dropping each of n chunks.
  size_t n = 2;
  while (input.size() >= 2 && !run.budget_hit()) {
    size_t chunk = (input.size() + n - 1) / n;
    bool reduced = false;
    for (size_t start = 0; start < input.size() && !run.budget_hit(); start += chunk) {
      std::vector<InputItem> candidate(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(start));
      size_t end = std::min(input.size(), start + chunk);
      for (size_t k = end; k < input.size(); ++k) {
        std::vector<int> after;
        for (int p : input[k].after) {
          // A wait for a dropped request becomes a wait for the last kept
          // request before it, so sequential chains stay sequential.
          int q = static_cast<size_t>(p) < start  ? p
                  : static_cast<size_t>(p) >= end ? p - static_cast<int>(end - start)
                                                  : static_cast<int>(start) - 1;
          if (q >= 0 && std::find(after.begin(), after.end(), q) == after.end()) after.push_back(q);
        }
        InputItem kept = input[k];  // a fault item stays one
        kept.jexpr = ShiftLabels(kept.jexpr, start, end);
        kept.after = std::move(after);
        candidate.push_back(std::move(kept));
      }
      if (candidate.empty()) continue;
      auto ok = run.Try(candidate, &input);
      if (!ok.ok()) return ok.status();
      if (*ok) {
        n = std::max<size_t>(n - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (n >= input.size()) break;
      n = std::min(input.size(), n * 2);
    }
  }

  // 2. Everything on one connection: the server then takes the requests in
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

  // 3. Simplify each request; keep a change when the failure survives it.
  for (size_t i = 0; i < input.size() && !run.budget_hit(); ++i) {
    bool changed = true;
    while (changed && !run.budget_hit() && i < input.size()) {
      changed = false;
      for (const auto& simpler : Simplifications(input[i])) {
        std::vector<InputItem> candidate = input;
        candidate[i] = simpler;
        auto ok = run.Try(candidate, &input);
        if (!ok.ok()) return ok.status();
        if (*ok) {
          changed = true;
          break;
        }
        if (run.budget_hit()) break;
      }
    }
  }

  ShrinkResult res;
  res.input = std::move(input);
  res.last = std::move(run.last());
  res.reruns = run.reruns();
  res.complete = !run.budget_hit();
  return res;
}

}  // namespace dualswarm::harness
