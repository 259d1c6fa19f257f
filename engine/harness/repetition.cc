#include "engine/harness/repetition.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::harness {
namespace {

// `text` with the word "label FROM" (not a longer number) made "label TO".
std::string WithLabel(const std::string& text, int64_t from, int64_t to) {
  const std::string word = absl::StrCat("label ", from);
  std::string out;
  size_t at = 0;
  for (size_t hit; (hit = text.find(word, at)) != std::string::npos; at = hit + word.size()) {
    const size_t end = hit + word.size();
    const bool whole = end == text.size() || !absl::ascii_isdigit(static_cast<unsigned char>(text[end]));
    absl::StrAppend(&out, text.substr(at, hit - at), whole ? absl::StrCat("label ", to) : word);
  }
  out += text.substr(at);
  return out;
}

}  // namespace

std::vector<InputItem> Repeated(const std::vector<InputItem>& core, int times) {
  if (times < 2 || core.empty()) return core;
  const size_t n = core.size();
  std::vector<InputItem> out;
  out.reserve(n * static_cast<size_t>(times));
  std::vector<int> shifted(n);
  for (int round = 0; round < times; ++round) {
    const int base = round * static_cast<int>(n);
    for (size_t p = 0; p < n; ++p) shifted[p] = base + static_cast<int>(p);
    for (size_t p = 0; p < n; ++p) {
      InputItem item = core[p];
      item.jexpr = RelabelRefs(item.jexpr, shifted);
      for (int& a : item.after) a += base;
      // A round starts once the one before it is over.
      if (p == 0 && round > 0)
        for (int q = base - static_cast<int>(n); q < base; ++q) item.after.push_back(q);
      out.push_back(std::move(item));
    }
  }
  return out;
}

int FoldRepeated(size_t core_size, RerunOutcome* run) {
  if (core_size == 0) return 0;
  const int64_t span = 2 * static_cast<int64_t>(core_size);  // labels per round
  const int64_t label = run->verdict.origin_side ? 0 : run->verdict.label;
  const int64_t round = label >= 1 ? (label - 1) / span : 0;
  const int64_t first = round * span + 1, last = (round + 1) * span;
  auto in_round = [&](int64_t l) { return l >= first && l <= last; };
  std::vector<check::Observation> kept;
  bool started = false;
  for (check::Observation& o : run->trace) {
    const bool labelled = o.label >= 1 && o.side == check::Side::kClient;
    if (labelled && in_round(o.label)) started = true;
    if (!started || (labelled && !in_round(o.label))) continue;
    if (labelled) o.label -= round * span;
    kept.push_back(std::move(o));
  }
  run->trace = std::move(kept);
  if (label >= 1) {
    run->verdict.label = label - round * span;
    run->verdict.reason = WithLabel(run->verdict.reason, label, run->verdict.label);
  }
  // What a run sent carries the waits it observed. A failure in round 0 is
  // a run of the core like any other; a later round's may need any request
  // of the rounds before it, and round 0's waits are not the ones under which
  // it failed: then `sent` is left empty, and the core stays as it was.
  if (round > 0) run->sent.clear();
  run->round = static_cast<int>(round);
  return run->round;
}

namespace {

// Whether the response of the request at `earlier` had arrived when the one
// at `later` was sent: some request from earlier+1 to later waited for it
// (an input lists each arrival once, at the first request sent after it).
bool ArrivedBefore(const std::vector<InputItem>& input, int earlier, int later) {
  for (int m = earlier + 1; m <= later; ++m) {
    const auto& after = input[static_cast<size_t>(m)].after;
    if (std::find(after.begin(), after.end(), earlier) != after.end()) return true;
  }
  return false;
}

}  // namespace

std::vector<InputItem> RaceWindow(const std::vector<InputItem>& input, int failing, size_t before, size_t max_size) {
  const int n = static_cast<int>(input.size());
  if (failing < 0 || failing >= n) return {};
  const std::string own = ResourceOf(input[static_cast<size_t>(failing)]);
  auto on_own = [&](int k) {
    const InputItem& item = input[static_cast<size_t>(k)];
    return !item.is_fault() && (own.empty() || ResourceOf(item) == own);
  };
  std::vector<bool> keep(input.size());
  keep[static_cast<size_t>(failing)] = true;
  for (int k = 0; k < n; ++k) {
    if (k == failing || !on_own(k)) continue;
    if (k > failing ? !ArrivedBefore(input, failing, k) : !ArrivedBefore(input, k, failing))
      keep[static_cast<size_t>(k)] = true;
  }
  size_t setup = 0;
  for (int k = failing - 1; k >= 0 && setup < before; --k)
    if (!keep[static_cast<size_t>(k)] && on_own(k)) {
      keep[static_cast<size_t>(k)] = true;
      ++setup;
    }
  // The resource's first request too: on a fresh server the window's own
  // requests would otherwise find the resource missing, and the first of
  // them that makes it may race the others to (two PUTs that both create
  // a path), failing another way than the race sought.
  int first = -1;
  for (int k = 0; k < failing && first < 0; ++k)
    if (on_own(k)) first = k;
  if (first >= 0) keep[static_cast<size_t>(first)] = true;
  // At most max_size: the earliest go first, never the failing request nor
  // the resource's first one.
  size_t count = static_cast<size_t>(std::count(keep.begin(), keep.end(), true));
  for (int k = 0; k < n && count > max_size; ++k)
    if (keep[static_cast<size_t>(k)] && k != failing && k != first) {
      keep[static_cast<size_t>(k)] = false;
      --count;
    }
  std::vector<bool> drop(input.size());
  for (size_t k = 0; k < input.size(); ++k) drop[k] = !keep[k];
  return Without(input, drop);
}

}  // namespace dualswarm::harness
