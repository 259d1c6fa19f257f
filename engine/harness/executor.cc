#include "engine/harness/executor.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/harness/coverage.h"
#include "engine/lang/interp.h"

namespace dualswarm::harness {

using ir::Value;

bool FeatureMask::Disabled(int site, int alt) const {
  if (site < 0 || static_cast<size_t>(site) >= disabled.size() || alt >= 64) return false;
  return (disabled[static_cast<size_t>(site)] >> alt) & 1;
}

std::string FeatureMask::ToString() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < disabled.size(); ++i)
    if (disabled[i]) parts.push_back(absl::StrCat(i, ":", absl::Hex(disabled[i])));
  return absl::StrJoin(parts, ",");
}

absl::StatusOr<FeatureMask> FeatureMask::Parse(absl::string_view text) {
  FeatureMask m;
  if (text.empty()) return m;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, ':');
    uint64_t site = 0, bits = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[0], &site) || site > 10000 || !absl::SimpleHexAtoi(kv[1], &bits))
      return absl::InvalidArgumentError(
          absl::StrCat("feature mask \"", text, "\": expected SITE:HEXBITS[,SITE:HEXBITS...], e.g. 0:5,2:1"));
    if (m.disabled.size() <= site) m.disabled.resize(site + 1, 0);
    m.disabled[site] = bits;
  }
  return m;
}

FeatureMask FeatureMask::Random(uint64_t seed, int sites) {
  std::mt19937_64 rng(seed ^ 0x5eed5eed5eedull);
  FeatureMask m;
  m.disabled.resize(static_cast<size_t>(std::max(sites, 0)), 0);
  for (auto& bits : m.disabled)
    for (int i = 0; i < 16; ++i)
      if (rng() % 3 == 0) bits |= uint64_t{1} << i;
  return m;
}

// The tester side of `gen`: random choices from the executor's seed, the
// swarm mask, and holes into the live trace.
class Executor::Gen : public lang::GenContext {
 public:
  Gen(std::mt19937_64* rng, const FeatureMask* mask, const std::vector<ir::LabeledMessage>* msgs,
      std::vector<bool>* branches_taken)
      : rng_(rng), mask_(mask), msgs_(msgs), branches_taken_(branches_taken) {}

  void TookBranches(const std::vector<int32_t>& ids) override {
    for (const int32_t id : ids)
      if (id >= 0 && static_cast<size_t>(id) < branches_taken_->size())
        (*branches_taken_)[static_cast<size_t>(id)] = true;
  }

  int ChooseAlternative(int site, const std::vector<int64_t>& weights, const std::vector<bool>& excluded) override {
    // The mask applies unless it would leave nothing.
    bool any_unmasked = false;
    for (size_t i = 0; i < weights.size(); ++i)
      any_unmasked |= !excluded[i] && !mask_->Disabled(site, static_cast<int>(i));
    int64_t total = 0;
    for (size_t i = 0; i < weights.size(); ++i)
      if (Allowed(site, i, excluded, any_unmasked)) total += weights[i];
    if (total <= 0) return -1;
    int64_t r = static_cast<int64_t>((*rng_)() % static_cast<uint64_t>(total));
    for (size_t i = 0; i < weights.size(); ++i) {
      if (!Allowed(site, i, excluded, any_unmasked)) continue;
      if (r < weights[i]) return static_cast<int>(i);
      r -= weights[i];
    }
    return -1;
  }
  int64_t RandomInt(int64_t lo, int64_t hi) override { return std::uniform_int_distribution<int64_t>(lo, hi)(*rng_); }
  std::string RandomWord(int64_t n) override {
    std::string w;
    for (int64_t i = 0; i < n; ++i) w.push_back(static_cast<char>('a' + (*rng_)() % 26));
    return w;
  }
  std::string RandomEtag() override { return absl::StrCat("\"", RandomWord(6), "\""); }
  std::optional<Value> Observed(const std::string& path) override {
    auto jp = ir::ParseJPath(path);
    if (!jp.ok()) return std::nullopt;
    // Candidates: the most recent messages (newest first) that have the path.
    std::vector<const ir::LabeledMessage*> found;
    for (auto it = msgs_->rbegin(); it != msgs_->rend() && found.size() < 8; ++it) {
      const Value* v = ir::FollowJPath(it->msg, *jp);
      if (v != nullptr && (v->is_string() || v->is_int() || v->is_bool())) found.push_back(&*it);
    }
    if (found.empty()) return std::nullopt;
    const ir::LabeledMessage* m = found[(*rng_)() % found.size()];
    ir::JRef ref;
    ref.label = m->label;
    ref.path = *jp;
    ref.fn = "id";
    if ((*rng_)() % 5 == 0) {
      const Value* v = ir::FollowJPath(m->msg, *jp);
      if (v->is_string()) ref.fn = (*rng_)() % 2 ? "weaken" : "strip_weak";
    }
    auto fallback = ir::ApplyJFn(ref.fn, *ir::FollowJPath(m->msg, *jp));
    holes_.push_back(ir::MakeHole(ref, fallback.ok() ? &*fallback : nullptr));
    return holes_.back();
  }
  // The holes Observed() made: every other map that looks like one is data.
  const std::vector<Value>& holes() const { return holes_; }

  // Concolic mode: random_int and random_word (of at most kMaxSymbolicWord
  // characters) give variables numbered from `first_var` on; each is also
  // drawn as usual, the value it keeps unless a solution says otherwise.
  static constexpr int64_t kMaxSymbolicWord = 32;
  // Past these a request's draws are concrete again, and a gen block that
  // branches this often on them has no concolic candidate.
  static constexpr size_t kMaxSymbolicDraws = 64;
  static constexpr size_t kMaxGenConditions = 256;
  void MakeDrawsSymbolic(int64_t first_var) {
    symbolic_ = true;
    first_var_ = next_var_ = first_var;
  }
  std::optional<Value> SymbolicInt(int64_t lo, int64_t hi) override {
    if (!symbolic_ || inputs_.size() >= kMaxSymbolicDraws) return std::nullopt;
    const int64_t drawn = RandomInt(lo, hi);
    sym::TermRef v = sym::MkVar(sym::Sort::kInt, next_var_++, "random_int");
    domain_.push_back(sym::MkLe(sym::MkInt(lo), v));
    domain_.push_back(sym::MkLe(v, sym::MkInt(hi)));
    int_bounds_[v->ival] = {lo, hi};
    draws_[v->ival] = sym::MkInt(drawn);
    inputs_.push_back(v);
    return Value::Sym(std::move(v));
  }
  std::optional<Value> SymbolicWord(const Value& length) override {
    if (!symbolic_ || inputs_.size() >= kMaxSymbolicDraws) return std::nullopt;
    int64_t longest = 0;
    std::string drawn;
    if (length.is_int()) {
      longest = length.as_int();
      if (longest > kMaxSymbolicWord) return std::nullopt;
      drawn = RandomWord(longest);
    } else {
      // Only a length random_int made has a known bound and a draw.
      const sym::TermRef& n = length.as_term();
      if (n->op != sym::TermOp::kVar || !int_bounds_.contains(n->ival)) return std::nullopt;
      const auto [lo, hi] = int_bounds_[n->ival];
      if (lo < 0 || hi > kMaxSymbolicWord) return std::nullopt;  // as drawn, a negative length is a spec error
      longest = hi;
      drawn = RandomWord(draws_[n->ival]->ival);
    }
    sym::TermRef w = sym::MkVar(sym::Sort::kString, next_var_++, "random_word");
    domain_.push_back(sym::MkEq(sym::MkLen(w), length.is_int() ? sym::MkInt(longest) : length.as_term()));
    // Each character a-z, as RandomWord draws them (past the end, the
    // substring is empty and the constraint holds).
    for (int64_t i = 0; i < longest; ++i)
      domain_.push_back(
          sym::MkContains(sym::MkString("abcdefghijklmnopqrstuvwxyz"), sym::MkSubstr(w, sym::MkInt(i), sym::MkInt(1))));
    draws_[w->ival] = sym::MkString(std::move(drawn));
    inputs_.push_back(w);
    return Value::Sym(std::move(w));
  }
  void Constrain(const sym::TermRef& cond) override {
    if (!symbolic_) return;
    // Only conditions on the draws: one on the model state's values says
    // nothing about what may be solved.
    std::vector<sym::TermRef> vars;
    sym::CollectVars(cond, &vars);
    bool on_draws = false;
    for (const auto& v : vars) on_draws |= v->ival >= first_var_ && v->ival < next_var_;
    if (!on_draws) return;
    if (++conditions_ > kMaxGenConditions) {
      too_many_conditions_ = true;
      return;
    }
    domain_.push_back(cond);
  }
  bool too_many_conditions() const { return too_many_conditions_; }
  // The variables the draws gave, the constraints on them (their domains,
  // and the arms the gen block took), and the values drawn for them.
  const std::vector<sym::TermRef>& inputs() const { return inputs_; }
  const std::vector<sym::TermRef>& domain() const { return domain_; }
  const sym::Bindings& draws() const { return draws_; }

 private:
  bool Allowed(int site, size_t i, const std::vector<bool>& excluded, bool use_mask) const {
    if (excluded[i]) return false;
    return !use_mask || !mask_->Disabled(site, static_cast<int>(i));
  }
  std::mt19937_64* rng_;
  const FeatureMask* mask_;
  const std::vector<ir::LabeledMessage>* msgs_;
  std::vector<bool>* branches_taken_;  // by branch id
  std::vector<Value> holes_;
  bool symbolic_ = false;  // concolic mode (MakeDrawsSymbolic)
  size_t conditions_ = 0;  // Constrain() calls
  bool too_many_conditions_ = false;
  int64_t first_var_ = 0, next_var_ = 0;
  std::vector<sym::TermRef> inputs_, domain_;
  sym::Bindings draws_;
  absl::flat_hash_map<int64_t, std::pair<int64_t, int64_t>> int_bounds_;  // random_int variable -> its range
};

namespace {

// The origin gen the tester answers with: `wanted`, or the spec's only one
// ("" when the spec has no origin role). Create checks it exists.
std::string OriginGenOf(const lang::Spec& spec, const std::string& wanted) {
  if (!wanted.empty()) return wanted;
  std::vector<std::string> names;
  for (const auto& g : spec.ast.gens)
    if (g.role == lang::Role::kOrigin) names.push_back(g.name);
  if (names.size() == 1) return names[0];
  for (const std::string& name : names)
    if (name == kDefaultOriginGen) return name;
  return "";
}

// Labels of the holes in a J-expression.
void HoleLabels(const Value& j, std::vector<int64_t>* out) {
  if (ir::IsQuoted(j)) return;
  if (ir::IsHole(j)) {
    if (auto ref = ir::ParseJRef(j.Find("$ref")->as_string()); ref.ok()) out->push_back(ref->label);
    return;
  }
  if (j.is_map()) {
    for (const auto& [k, v] : j.as_map()) HoleLabels(v, out);
  } else if (j.is_list()) {
    for (const auto& v : j.as_list()) HoleLabels(v, out);
  }
}

// Replaces header values that came from responses by references to them.
Value AutoReference(const Value& request, const ResponseHeaderIndex& index) {
  const Value* headers = request.Find("headers");
  if (headers == nullptr || !headers->is_map()) return request;
  Value h = *headers;
  for (const auto& [k, v] : headers->as_map()) {
    if (!v.is_string()) continue;
    if (auto hole = index.ReferenceTo(v.as_string())) h = h.Set(k, *hole);
  }
  return request.Set("headers", h);
}

}  // namespace

void ResponseHeaderIndex::Add(int64_t label, const Value& response) {
  const Value* headers = response.Find("headers");
  if (headers == nullptr) return;
  ir::JPath path = {{false, "headers", 0}};
  ir::ForEachStringLeaf(*headers, &path, [&](const std::string& value, const ir::JPath& at) {
    if (value.size() < 2) return;
    auto [it, inserted] = newest_.try_emplace(value, Where{label, at});
    // Within one response the first leaf found stays; a later response wins.
    if (!inserted && it->second.label != label) it->second = Where{label, at};
  });
}

std::optional<Value> ResponseHeaderIndex::ReferenceTo(const std::string& value) const {
  if (value.size() < 2) return std::nullopt;
  struct Form {
    std::string text;
    const char* fn;
  };
  Form forms[] = {{value, "id"},
                  value.rfind("W/", 0) == 0 ? Form{value.substr(2), "weaken"} : Form{"W/" + value, "strip_weak"}};
  const Where* best = nullptr;
  const char* fn = nullptr;
  for (const auto& f : forms) {
    auto it = newest_.find(f.text);
    if (it == newest_.end()) continue;
    if (best == nullptr || it->second.label > best->label) {
      best = &it->second;
      fn = f.fn;
    }
  }
  if (best == nullptr) return std::nullopt;
  Value v = Value::String(value);
  return ir::MakeHole({best->label, best->path, fn}, &v);
}

Executor::Executor(std::shared_ptr<const lang::Spec> spec, const ExecutorOptions& options,
                   std::unique_ptr<check::Checker> checker)
    : spec_(std::move(spec)),
      opts_(options),
      checker_(std::move(checker)),
      rng_(options.seed),
      outstanding_(static_cast<size_t>(options.connections)),
      origin_gen_(OriginGenOf(*spec_, options.origin_gen)),
      origin_rng_(options.seed ^ 0x0419'14e5'0000'0001ull),
      origin_book_(options.origin_answers) {
  gen_branches_.assign(spec_->branches.size(), false);
  bool has_gen = false;
  for (const auto& g : spec_->ast.gens) has_gen |= g.name == opts_.gen && g.role == lang::Role::kClient;
  if (!has_gen && !spec_->ast.ops.empty())
    signature_gen_ = std::make_unique<SignatureGenerator>(
        spec_, opts_.checker.connection_nodes,
        opts_.pool_max_depth > 0 ? opts_.pool_max_depth : 8 << static_cast<int>(opts_.seed % 3));
  if (options.guide_candidates > 1) {
    guide_ = std::make_unique<CoverageGuide>(spec_, options.checker.connection_nodes, options.checker.cancel);
    guide_->Reach(options.guide_reached);
  }
}

std::vector<int32_t> Executor::CoveredBranches() const {
  std::vector<int32_t> generated;
  for (size_t i = 0; i < gen_branches_.size(); ++i)
    if (gen_branches_[i]) generated.push_back(static_cast<int32_t>(i));
  return MergeCoverage(checker_->CoveredBranches(), generated);
}

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::shared_ptr<const lang::Spec> spec,
                                                           const ExecutorOptions& options) {
  if (options.connections < 1 || options.connections > 1024)
    return absl::InvalidArgumentError("connections must be between 1 and 1024");
  if (options.max_in_flight < 1) return absl::InvalidArgumentError("max_in_flight must be at least 1");
  if (!options.replay) {
    bool has_gen = false;
    for (const auto& g : spec->ast.gens) has_gen |= g.name == options.gen && g.role == lang::Role::kClient;
    // A library interface's calls come from its signature.
    if (!has_gen && spec->ast.ops.empty())
      return absl::InvalidArgumentError(absl::StrCat("spec '", spec->name, "' has no client `gen ", options.gen,
                                                     " { ... }` block to generate requests from"));
  } else {
    for (const auto& item : *options.replay)
      if (item.conn < 0 || item.conn >= options.connections)
        return absl::InvalidArgumentError(
            absl::StrCat("test input uses connection ", item.conn, " but only ", options.connections, " are open"));
  }
  const bool intermediary = lang::Interpreter(spec.get()).HasOriginRole();
  int origin_gens = 0;
  bool has_origin_gen = false;
  for (const auto& g : spec->ast.gens) {
    origin_gens += g.role == lang::Role::kOrigin;
    has_origin_gen |= g.role == lang::Role::kOrigin && g.name == options.origin_gen;
  }
  if (!intermediary && !options.origin_gen.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("an origin gen was given but spec '", spec->name, "' has no origin role"));
  if (intermediary && (options.origin_gen.empty() ? OriginGenOf(*spec, "").empty() : !has_origin_gen))
    return absl::InvalidArgumentError(absl::StrCat(
        "spec '", spec->name, "' has an origin role: the tester answers as the origin with a `gen NAME(REQ): origin`",
        options.origin_gen.empty() ? absl::StrCat(" block; it has ", origin_gens, " (with several, one is named `",
                                                  kDefaultOriginGen, "` or --origin-gen names one)")
                                   : absl::StrCat(" block named ", options.origin_gen, ", which it lacks")));
  check::CheckerOptions co = options.checker;
  co.seed = options.seed;
  co.defer_when_stalled = true;  // the runner calls FinishChecking
  auto checker = check::Checker::Create(spec, co);
  if (!checker.ok()) return checker.status();
  return std::unique_ptr<Executor>(new Executor(std::move(spec), options, std::move(*checker)));
}

size_t Executor::in_flight() const {
  size_t n = 0;
  for (const auto& q : outstanding_) n += q.size();
  return n;
}

void Executor::SetConnectionAvailable(int conn, bool available) {
  if (conn < 0 || conn >= opts_.connections) return;
  unavailable_.resize(static_cast<size_t>(opts_.connections), false);
  unavailable_[static_cast<size_t>(conn)] = !available;
}

// Moves *conn to the first available connection from it on (cyclically)
// that carries fewer than max_in_flight_per_connection requests; false
// when none does.
bool Executor::NextAvailable(int* conn) const {
  const size_t limit = static_cast<size_t>(std::max(opts_.max_in_flight_per_connection, 0));
  if (unavailable_.empty() && limit == 0) return true;
  for (int k = 0; k < opts_.connections; ++k) {
    const size_t c = static_cast<size_t>((*conn + k) % opts_.connections);
    const bool down = c < unavailable_.size() && unavailable_[c];
    const bool full = limit != 0 && c < outstanding_.size() && outstanding_[c].size() >= limit;
    if (!down && !full) {
      *conn = static_cast<int>(c);
      return true;
    }
  }
  return false;
}

absl::StatusOr<Value> Executor::Generate(const lang::Interpreter& interp) {
  const std::vector<Value> model = checker_->ModelState();
  const int candidates = guide_ != nullptr ? opts_.guide_candidates : 1;
  std::optional<Value> best;
  std::vector<bool> best_gen_branches;
  std::vector<int32_t> best_predicted;
  size_t best_novelty = 0;
  for (int k = 0; k < candidates; ++k) {
    std::vector<bool> gen_branches(gen_branches_.size(), false);
    Gen gen(&rng_, &opts_.mask, &messages_, &gen_branches);
    auto jexpr = interp.RunGen(opts_.gen, model, &gen);
    if (!jexpr.ok()) return jexpr.status();
    Value candidate = AutoReference(ir::QuoteLookalikes(*jexpr, gen.holes()), response_headers_);
    std::vector<int32_t> predicted;
    size_t novelty = 0;
    if (guide_ != nullptr) {
      // Holes read as they would if it were sent now.
      if (auto msg = ir::Instantiate(candidate, messages_); msg.ok()) {
        predicted = guide_->Predict(model, *msg);
        novelty = guide_->Novelty(predicted);
      }
    }
    if (!best || novelty > best_novelty) {
      best = std::move(candidate);
      best_gen_branches = std::move(gen_branches);
      best_predicted = std::move(predicted);
      best_novelty = novelty;
    }
  }
  if (guide_ != nullptr && opts_.guide_concolic) {
    std::vector<bool> gen_branches(gen_branches_.size(), false);
    if (std::optional<Value> candidate = ConcolicCandidate(interp, model, &gen_branches)) {
      std::vector<int32_t> predicted;
      if (auto msg = ir::Instantiate(*candidate, messages_); msg.ok()) predicted = guide_->Predict(model, *msg);
      const size_t novelty = guide_->Novelty(predicted);
      if (!best || novelty > best_novelty) {
        best = *std::move(candidate);
        best_gen_branches = std::move(gen_branches);
        best_predicted = std::move(predicted);
        best_novelty = novelty;
      }
    }
  }
  if (guide_ != nullptr) guide_->Reach(best_predicted);
  for (size_t i = 0; i < best_gen_branches.size(); ++i)
    if (best_gen_branches[i]) gen_branches_[i] = true;
  return *std::move(best);
}

std::optional<Value> Executor::ConcolicCandidate(const lang::Interpreter& interp, const std::vector<Value>& model,
                                                 std::vector<bool>* gen_branches) {
  // Apart from the guide's own variables (from 2^50 on), those the checker
  // numbers from 0 and its steps' (from sym::kStepVarBase, 2^62).
  constexpr int64_t kConcolicVarBase = int64_t{1} << 51;
  Gen gen(&rng_, &opts_.mask, &messages_, gen_branches);
  gen.MakeDrawsSymbolic(kConcolicVarBase);
  // The gen block may need a draw concrete (a map key, a loop bound): then
  // there is no concolic candidate, and the drawn ones stand.
  auto jexpr = interp.RunGen(opts_.gen, model, &gen);
  if (!jexpr.ok() || gen.inputs().empty() || gen.too_many_conditions()) return std::nullopt;
  auto msg = ir::Instantiate(ir::QuoteLookalikes(*jexpr, gen.holes()), messages_);
  if (!msg.ok()) return std::nullopt;
  std::optional<sym::Bindings> values =
      guide_->SolveForNewBranches(model, *msg, gen.inputs(), gen.domain(), gen.draws());
  if (!values) return std::nullopt;
  Value concrete = ir::SubstituteValue(*jexpr, *values);
  // Every draw must now be a value: a term left over (arithmetic on a draw
  // that overflows 64 bits does not fold) is no request to send.
  if (!concrete.IsConcrete()) return std::nullopt;
  return AutoReference(ir::QuoteLookalikes(concrete, gen.holes()), response_headers_);
}

absl::StatusOr<std::optional<PlannedRequest>> Executor::Next() {
  if (draining_ && in_flight() == 0) draining_ = false;
  // A replayed fault goes in at its place whatever is in flight, as it did.
  const bool fault_next = opts_.replay && replay_pos_ < opts_.replay->size() && (*opts_.replay)[replay_pos_].is_fault();
  if (decided() || (!fault_next && (draining_ || in_flight() >= static_cast<size_t>(opts_.max_in_flight))))
    return std::optional<PlannedRequest>();
  InputItem item;
  if (opts_.replay) {
    if (replay_pos_ >= opts_.replay->size()) return std::optional<PlannedRequest>();
    item = (*opts_.replay)[replay_pos_];
    // Causal order of the recorded run: wait for the responses it had seen,
    // unless nothing is in flight any more (they were lost: go on).
    for (int pos : item.after)
      if (pos >= 0 && static_cast<size_t>(pos) < inputs_.size() &&
          (static_cast<size_t>(pos) >= answered_.size() || !answered_[static_cast<size_t>(pos)]) && in_flight() > 0)
        return std::optional<PlannedRequest>();
  } else {
    if (sent_ >= opts_.steps) return std::optional<PlannedRequest>();
    int any = 0;
    if (!NextAvailable(&any)) return std::optional<PlannedRequest>();  // before the generator draws anything
    lang::Interpreter interp(spec_.get(), opts_.checker.connection_nodes);
    auto jexpr = signature_gen_ != nullptr ? GenerateCall() : Generate(interp);
    if (!jexpr.ok()) return jexpr.status();
    item.jexpr = *std::move(jexpr);
    item.conn = static_cast<int>(rng_() % static_cast<uint64_t>(opts_.connections));
    NextAvailable(&item.conn);
  }
  if (item.is_fault())
    return std::optional<PlannedRequest>(PlannedRequest{next_label_, -1, Value(), Value(), item.fault});
  // A hole that refers to the response of a request still outstanding waits
  // for it (causality as in the original run); references to requests this
  // run never sent are resolved loosely at once.
  std::vector<int64_t> refs;
  HoleLabels(item.jexpr, &refs);
  for (int64_t label : refs) {
    if (label % 2 != 0 || label - 1 >= next_label_) continue;
    bool have = false;
    for (auto it = messages_.rbegin(); it != messages_.rend() && !have; ++it) have = it->label == label;
    bool outstanding = false;
    for (const auto& q : outstanding_)
      for (const auto& [l, t] : q) outstanding |= l == label - 1;
    if (!have && outstanding) return std::optional<PlannedRequest>();
  }
  auto msg = ir::Instantiate(item.jexpr, messages_);
  if (!msg.ok()) return msg.status();
  PlannedRequest r{next_label_, item.conn, item.jexpr, std::move(*msg), Value()};
  return std::optional<PlannedRequest>(std::move(r));
}

absl::StatusOr<Value> Executor::GenerateCall() {
  std::vector<bool> unused(gen_branches_.size(), false);
  Gen gen(&rng_, &opts_.mask, &messages_, &unused);
  return signature_gen_->Next(messages_, &gen);
}

absl::Status Executor::Sent(const PlannedRequest& r, int64_t t_ns) {
  if (r.label != next_label_) return absl::FailedPreconditionError("requests must be sent in the order planned");
  if (signature_gen_ != nullptr && !opts_.replay) signature_gen_->Sent(r.label, r.msg);
  next_label_ += 2;
  if (opts_.replay) {
    ++replay_pos_;
  } else if (opts_.drain_probability > 0 &&
             std::uniform_real_distribution<double>(0, 1)(rng_) < opts_.drain_probability) {
    draining_ = true;
  }
  ++sent_;
  InputItem sent;
  sent.conn = r.conn;
  sent.jexpr = r.jexpr;
  sent.after = std::move(answered_since_send_);
  if (opts_.replay && !(*opts_.replay)[replay_pos_ - 1].origin_answers.empty()) {
    sent.origin_answers = (*opts_.replay)[replay_pos_ - 1].origin_answers;
    attached_[r.label] = sent.origin_answers;
  }
  inputs_.push_back(std::move(sent));
  answered_since_send_.clear();
  outstanding_[static_cast<size_t>(r.conn)].push_back({r.label, t_ns});
  check::Observation o;
  o.kind = check::Observation::Kind::kSent;
  o.label = r.label;
  o.conn = r.conn;
  o.msg = r.msg;
  o.t = t_ns;
  messages_.push_back({r.label, r.msg});
  return Record(std::move(o));
}

absl::Status Executor::Received(int conn, Value msg, int64_t t_ns) {
  if (conn < 0 || conn >= opts_.connections || outstanding_[static_cast<size_t>(conn)].empty())
    return absl::InvalidArgumentError(
        absl::StrCat("a response on connection ", conn, ", where no request is outstanding"));
  int64_t label = outstanding_[static_cast<size_t>(conn)].front().first + 1;
  size_t pos = static_cast<size_t>(label / 2 - 1);
  if (answered_.size() <= pos) answered_.resize(pos + 1, false);
  answered_[pos] = true;
  answered_since_send_.push_back(static_cast<int>(pos));
  outstanding_[static_cast<size_t>(conn)].pop_front();
  attached_.erase(label - 1);
  ++received_;
  check::Observation o;
  o.kind = check::Observation::Kind::kReceived;
  o.label = label;
  o.conn = conn;
  o.msg = std::move(msg);
  o.t = t_ns;
  messages_.push_back({label, o.msg});
  response_headers_.Add(label, o.msg);
  return Record(std::move(o));
}

absl::Status Executor::Closed(int conn, int64_t t_ns) {
  if (conn < 0 || conn >= opts_.connections) return absl::InvalidArgumentError("no such connection");
  for (const auto& [label, sent] : outstanding_[static_cast<size_t>(conn)]) attached_.erase(label);
  if (signature_gen_ != nullptr) {
    std::vector<int64_t> lost;
    for (const auto& [label, sent] : outstanding_[static_cast<size_t>(conn)]) lost.push_back(label);
    signature_gen_->Unanswered(lost);
  }
  outstanding_[static_cast<size_t>(conn)].clear();
  check::Observation o;
  o.kind = check::Observation::Kind::kClosed;
  o.conn = conn;
  o.t = t_ns;
  return Record(std::move(o));
}

absl::Status Executor::Fault(Value fault, int64_t t_ns) {
  if (opts_.replay && replay_pos_ < opts_.replay->size() && (*opts_.replay)[replay_pos_].is_fault()) ++replay_pos_;
  // The fault's position counts as answered at once: a replay item that
  // waits for it (a one-at-a-time chain) goes on right after it.
  const size_t pos = inputs_.size();
  if (answered_.size() <= pos) answered_.resize(pos + 1, false);
  answered_[pos] = true;
  InputItem item;
  item.after = std::move(answered_since_send_);
  answered_since_send_.clear();
  item.fault = fault;
  inputs_.push_back(std::move(item));
  next_label_ += 2;
  check::Observation o;
  o.kind = check::Observation::Kind::kFault;
  o.msg = std::move(fault);
  o.t = t_ns;
  return Record(std::move(o));
}

bool Executor::ReplaysFaults() const {
  if (!opts_.replay) return false;
  return std::any_of(opts_.replay->begin(), opts_.replay->end(), [](const InputItem& i) { return i.is_fault(); });
}

std::optional<int64_t> Executor::Overdue(int64_t now_ns, int64_t timeout_ns) const {
  auto r = OverdueAt(now_ns, timeout_ns);
  if (!r) return std::nullopt;
  return r->label;
}

std::optional<Executor::OverdueRequest> Executor::OverdueAt(
    int64_t now_ns, int64_t timeout_ns, const std::function<int64_t(int64_t sent_ns)>& excused) const {
  for (size_t c = 0; c < outstanding_.size(); ++c) {
    const auto& q = outstanding_[c];
    if (q.empty() || now_ns - q.front().second <= timeout_ns) continue;
    const int64_t not_counted = excused ? excused(q.front().second) : 0;
    if (now_ns - q.front().second - not_counted > timeout_ns)
      return OverdueRequest{q.front().first, static_cast<int>(c), q.front().second, not_counted};
  }
  return std::nullopt;
}

size_t Executor::origin_answers_owed() const {
  size_t owed = 0;
  for (const auto& [oconn, queue] : origin_queue_) owed += queue.size();
  return owed;
}

absl::Status Executor::GaveUp(int conn, int64_t t_ns) {
  if (conn < 0 || conn >= opts_.connections) return absl::InvalidArgumentError("no such connection");
  for (const auto& [label, sent] : outstanding_[static_cast<size_t>(conn)]) {
    check::Observation o;
    o.kind = check::Observation::Kind::kTimeout;
    o.label = label;
    o.conn = conn;
    o.t = t_ns;
    if (absl::Status s = Record(std::move(o)); !s.ok()) return s;
  }
  return Closed(conn, t_ns);
}

absl::Status Executor::Record(check::Observation o) {
  observations_.push_back(o);
  return checker_->Observe(std::move(o));
}

// ---- The origin side ---------------------------------------------------------

absl::Status Executor::OriginRequest(int oconn, Value msg, int64_t t_ns) {
  if (!plays_origin())
    return absl::FailedPreconditionError(
        absl::StrCat("the SUT sent a request to the origin, but spec '", spec_->name, "' has no origin role"));
  const int64_t label = next_origin_label_;
  next_origin_label_ += 2;
  const std::string key = OriginRequestKey(msg);
  const int64_t nth = origin_book_.Seen(key);
  int64_t order = -1;
  absl::StatusOr<Value> answer = OriginAnswerTo(key, msg, &order);
  if (!answer.ok()) return answer.status();
  origin_answers_given_.push_back({key, nth, KeptAnswer(*answer, msg)});
  const bool hold = std::uniform_real_distribution<double>(0, 1)(origin_rng_) < opts_.origin_hold_probability;
  int64_t due = t_ns + (hold ? std::uniform_int_distribution<int64_t>(0, kMaxOriginHoldNs)(origin_rng_) : 0);
  // A rerun gives its answers in the order its run did while it can: an
  // answer the run gave before this one may still be asked for.
  const bool order_held = order >= 0 && EarlierAnswerLeft(order);
  if (order_held) due = std::max(due, t_ns + kMaxOrderHoldNs);
  origin_queue_[oconn].push_back({label + 1, std::move(*answer), due, order, order_held});
  check::Observation o;
  o.kind = check::Observation::Kind::kReceived;
  o.side = check::Side::kOrigin;
  o.label = label;
  o.conn = oconn;
  o.msg = std::move(msg);
  o.t = t_ns;
  return Record(std::move(o));
}

// A rerun's answer for an origin request with `key`: one attached to a
// client request in flight (TakeAttachedAnswer), else the one kept for
// the key and its occurrence; else the origin gen's.
absl::StatusOr<Value> Executor::OriginAnswerTo(const std::string& key, const Value& msg, int64_t* order) {
  std::optional<Value> kept = origin_book_.Next(key);  // counts the occurrence either way
  if (std::optional<AttachedAnswer> attached = TakeAttachedAnswer(key, msg)) {
    kept = std::move(attached->answer);
    *order = attached->order;
  }
  if (kept) return AnswerFromKept(*kept, msg);
  lang::Interpreter interp(spec_.get(), opts_.checker.connection_nodes);
  Gen gen(&origin_rng_, &opts_.mask, &messages_, &gen_branches_);
  absl::StatusOr<Value> jexpr = interp.RunGen(origin_gen_, checker_->ModelState(), &gen, &msg);
  if (!jexpr.ok()) return jexpr.status();
  return ir::Instantiate(ir::QuoteLookalikes(*jexpr, gen.holes()), messages_);
}

std::optional<AttachedAnswer> Executor::TakeAttachedAnswer(const std::string& key, const Value& msg) {
  if (attached_.empty()) return std::nullopt;
  // The first answer attached to `label` with `key` (`loose`: one that
  // FitsLoosely instead).
  auto take = [&](int64_t label, bool loose) -> std::optional<AttachedAnswer> {
    auto found = attached_.find(label);
    if (found == attached_.end()) return std::nullopt;
    std::vector<AttachedAnswer>& answers = found->second;
    for (auto it = answers.begin(); it != answers.end(); ++it) {
      if (loose ? !FitsLoosely(*it, key) : it->key != key) continue;
      AttachedAnswer answer = std::move(*it);
      answers.erase(it);
      return answer;
    }
    return std::nullopt;
  };
  std::vector<int64_t> in_flight;  // every client request in flight, oldest first
  for (const auto& q : outstanding_)
    for (const auto& [label, sent] : q) in_flight.push_back(label);
  std::sort(in_flight.begin(), in_flight.end());
  const Value unknown;  // never: every request sent is in messages_
  std::vector<const Value*> requests;
  for (int64_t label : in_flight) {
    const Value* request = &unknown;
    for (auto it = messages_.rbegin(); it != messages_.rend() && request == &unknown; ++it)
      if (it->label == label) request = &it->msg;
    requests.push_back(request);
  }
  // The request it was forwarded from first (its own answer fits even
  // loosely), then the oldest in flight; an exact fit before a loose one.
  if (std::optional<size_t> forwarded = ForwardedFrom(msg, requests))
    for (bool loose : {false, true})
      if (std::optional<AttachedAnswer> answer = take(in_flight[*forwarded], loose)) return answer;
  for (bool loose : {false, true})
    for (int64_t label : in_flight)
      if (std::optional<AttachedAnswer> answer = take(label, loose)) return answer;
  return std::nullopt;
}

bool Executor::EarlierAnswerLeft(int64_t order) const {
  for (const auto& q : outstanding_)
    for (const auto& [label, sent] : q) {
      auto it = attached_.find(label);
      if (it == attached_.end()) continue;
      for (const AttachedAnswer& a : it->second)
        if (a.order >= 0 && a.order < order) return true;
    }
  for (const auto& [oconn, queue] : origin_queue_)
    for (const QueuedAnswer& a : queue)
      if (a.order >= 0 && a.order < order) return true;
  return false;
}

std::optional<OriginAnswer> Executor::NextOriginAnswer(int64_t t_ns) {
  std::vector<int> due;
  int ordered = -1;  // the due one with the least AttachedAnswer::order
  for (const auto& [oconn, queue] : origin_queue_) {
    if (queue.empty()) continue;
    const QueuedAnswer& a = queue.front();
    if (a.due_ns > t_ns && !(a.order_held && !EarlierAnswerLeft(a.order))) continue;
    due.push_back(oconn);
    if (a.order >= 0 && (ordered < 0 || a.order < origin_queue_[ordered].front().order)) ordered = oconn;
  }
  if (due.empty()) return std::nullopt;
  std::sort(due.begin(), due.end());  // the map's order is not the seed's
  const int oconn = ordered >= 0 ? ordered : due.size() == 1 ? due[0] : due[origin_rng_() % due.size()];
  const QueuedAnswer& a = origin_queue_[oconn].front();
  return OriginAnswer{oconn, a.label, a.msg};
}

absl::Status Executor::OriginAnswered(const OriginAnswer& a, int64_t t_ns) {
  auto it = origin_queue_.find(a.oconn);
  if (it == origin_queue_.end() || it->second.empty() || it->second.front().label != a.label)
    return absl::FailedPreconditionError("origin answers must be sent in the order NextOriginAnswer gives them");
  it->second.pop_front();
  check::Observation o;
  o.kind = check::Observation::Kind::kSent;
  o.side = check::Side::kOrigin;
  o.label = a.label;
  o.conn = a.oconn;
  o.msg = a.msg;
  o.t = t_ns;
  return Record(std::move(o));
}

absl::Status Executor::AbortOriginAnswers(int oconn, int64_t t_ns) {
  auto it = origin_queue_.find(oconn);
  if (it == origin_queue_.end()) return absl::OkStatus();
  const ir::Value abort = ir::Value::Map({{"abort", ir::Value::String("close")}});
  while (!it->second.empty()) {
    const int64_t label = it->second.front().label;
    it->second.pop_front();
    check::Observation o;
    o.kind = check::Observation::Kind::kSent;
    o.side = check::Side::kOrigin;
    o.label = label;
    o.conn = oconn;
    o.msg = abort;
    o.t = t_ns;
    if (absl::Status s = Record(std::move(o)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Executor::OriginClosed(int oconn, int64_t t_ns) {
  auto it = origin_queue_.find(oconn);
  if (it == origin_queue_.end()) return absl::OkStatus();  // it carried no request: not in the trace
  if (absl::Status s = AbortOriginAnswers(oconn, t_ns); !s.ok()) return s;
  origin_queue_.erase(oconn);
  check::Observation o;
  o.kind = check::Observation::Kind::kClosed;
  o.side = check::Side::kOrigin;
  o.conn = oconn;
  o.t = t_ns;
  return Record(std::move(o));
}

bool Executor::finished() const {
  if (decided()) return true;
  bool budget_spent = opts_.replay ? replay_pos_ >= opts_.replay->size() : sent_ >= opts_.steps;
  return budget_spent && in_flight() == 0;
}

}  // namespace dualswarm::harness
