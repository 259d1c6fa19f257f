#include "engine/ir/value.h"

#include <algorithm>
#include <atomic>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"

namespace dualswarm::ir {
namespace {

struct StringRep {
  std::string s;
};
// What the constructors of composite values record about their contents.
struct Shape {
  uint64_t tree_size = 1;
  uint32_t depth = 1;
  bool concrete = true;

  void Add(const Value& child) {
    tree_size = sym::SaturatingAdd(tree_size, child.TreeSize());
    depth = std::max(depth, child.Depth() + 1);
    concrete = concrete && child.IsConcrete();
  }
};
struct ListRep {
  std::vector<Value> items;
  Shape shape;
  // 0: not computed yet. Atomic: values are shared between threads (a
  // spec's constants, parallel shrinking reruns), and any of them may be
  // the first to compute it (they all compute the same number).
  mutable std::atomic<uint64_t> hash{0};
};
struct MapRep {
  MapEntries entries;
  Shape shape;
  mutable std::atomic<uint64_t> hash{0};  // as ListRep's
};
struct OptionRep {
  Value inner;
  Shape shape;
};

Shape ShapeOf(const std::vector<Value>& items) {
  Shape s;
  for (const auto& x : items) s.Add(x);
  return s;
}
Shape ShapeOf(const MapEntries& entries) {
  Shape s;
  for (const auto& [k, x] : entries) s.Add(x);
  return s;
}
struct SymRep {
  sym::TermRef t;
};

const std::string kEmptyString;
const std::vector<Value> kEmptyList;
const MapEntries kEmptyMap;
const Value kNullValue;

void AppendValue(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      out->append("null");
      return;
    case Value::Kind::kBool:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case Value::Kind::kInt:
      absl::StrAppend(out, v.as_int());
      return;
    case Value::Kind::kString:
      AppendJsonString(v.as_string(), out);
      return;
    case Value::Kind::kList: {
      out->push_back('[');
      bool first = true;
      for (const auto& x : v.as_list()) {
        if (!first) out->push_back(',');
        first = false;
        AppendValue(x, out);
      }
      out->push_back(']');
      return;
    }
    case Value::Kind::kMap: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, x] : v.as_map()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(k, out);
        out->push_back(':');
        AppendValue(x, out);
      }
      out->push_back('}');
      return;
    }
    case Value::Kind::kOption:
      if (!v.has_value()) {
        out->append("none");
      } else {
        out->append("some(");
        AppendValue(v.inner(), out);
        out->push_back(')');
      }
      return;
    case Value::Kind::kSym:
      out->append(sym::TermToString(v.as_term()));
      return;
  }
}

}  // namespace

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.i_ = b ? 1 : 0;
  return v;
}
Value Value::Int(int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  return v;
}
Value Value::String(std::string s) {
  Value v;
  v.kind_ = Kind::kString;
  v.rep_ = std::make_shared<StringRep>(StringRep{std::move(s)});
  return v;
}
Value Value::List(std::vector<Value> items) {
  Value v;
  v.kind_ = Kind::kList;
  auto rep = std::make_shared<ListRep>();
  rep->items = std::move(items);
  rep->shape = ShapeOf(rep->items);
  v.rep_ = std::move(rep);
  return v;
}
Value Value::Map(MapEntries entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Keep the last of equal keys.
  MapEntries dedup;
  dedup.reserve(entries.size());
  for (auto& e : entries) {
    if (!dedup.empty() && dedup.back().first == e.first) {
      dedup.back().second = std::move(e.second);
    } else {
      dedup.push_back(std::move(e));
    }
  }
  Value v;
  v.kind_ = Kind::kMap;
  auto rep = std::make_shared<MapRep>();
  rep->entries = std::move(dedup);
  rep->shape = ShapeOf(rep->entries);
  v.rep_ = std::move(rep);
  return v;
}
Value Value::None() {
  Value v;
  v.kind_ = Kind::kOption;
  v.i_ = 0;
  return v;
}
Value Value::Some(Value inner) {
  Value v;
  v.kind_ = Kind::kOption;
  v.i_ = 1;
  auto rep = std::make_shared<OptionRep>(OptionRep{std::move(inner), Shape{}});
  rep->shape.Add(rep->inner);
  v.rep_ = std::move(rep);
  return v;
}
Value Value::Sym(sym::TermRef t) {
  switch (t->op) {
    case sym::TermOp::kConstBool:
      return Bool(t->ival != 0);
    case sym::TermOp::kConstInt:
      return Int(t->ival);
    case sym::TermOp::kConstString:
      return String(t->sval);
    default:
      break;
  }
  Value v;
  v.kind_ = Kind::kSym;
  v.rep_ = std::make_shared<SymRep>(SymRep{std::move(t)});
  return v;
}

const std::string& Value::as_string() const {
  if (kind_ != Kind::kString) return kEmptyString;
  return static_cast<const StringRep*>(rep_.get())->s;
}
const std::vector<Value>& Value::as_list() const {
  if (kind_ != Kind::kList) return kEmptyList;
  return static_cast<const ListRep*>(rep_.get())->items;
}
const MapEntries& Value::as_map() const {
  if (kind_ != Kind::kMap) return kEmptyMap;
  return static_cast<const MapRep*>(rep_.get())->entries;
}
const Value& Value::inner() const {
  if (kind_ != Kind::kOption || !i_) return kNullValue;
  return static_cast<const OptionRep*>(rep_.get())->inner;
}
const sym::TermRef& Value::as_term() const {
  static const sym::TermRef kNoTerm = sym::MkBool(false);
  if (kind_ != Kind::kSym) return kNoTerm;
  return static_cast<const SymRep*>(rep_.get())->t;
}

std::optional<sym::Sort> Value::scalar_sort() const {
  switch (kind_) {
    case Kind::kBool:
      return sym::Sort::kBool;
    case Kind::kInt:
      return sym::Sort::kInt;
    case Kind::kString:
      return sym::Sort::kString;
    case Kind::kSym:
      return as_term()->sort;
    default:
      return std::nullopt;
  }
}

sym::TermRef Value::ToTerm() const {
  switch (kind_) {
    case Kind::kBool:
      return sym::MkBool(as_bool());
    case Kind::kInt:
      return sym::MkInt(as_int());
    case Kind::kString:
      return sym::MkString(as_string());
    case Kind::kSym:
      return as_term();
    default:
      return nullptr;
  }
}

const Value* Value::Find(absl::string_view key) const {
  const auto& e = as_map();
  auto it = std::lower_bound(e.begin(), e.end(), key, [](const auto& p, absl::string_view k) { return p.first < k; });
  if (it == e.end() || it->first != key) return nullptr;
  return &it->second;
}

Value Value::Set(absl::string_view key, Value v) const {
  const auto& e = as_map();
  auto rep = std::make_shared<MapRep>();
  rep->entries.reserve(e.size() + 1);
  auto it = std::lower_bound(e.begin(), e.end(), key, [](const auto& p, absl::string_view k) { return p.first < k; });
  rep->entries.insert(rep->entries.end(), e.begin(), it);
  rep->entries.emplace_back(std::string(key), std::move(v));
  if (it != e.end() && it->first == key) ++it;
  rep->entries.insert(rep->entries.end(), it, e.end());
  rep->shape = ShapeOf(rep->entries);
  Value out;
  out.kind_ = Kind::kMap;
  out.rep_ = std::move(rep);
  return out;
}

Value Value::Remove(absl::string_view key) const {
  if (Find(key) == nullptr) return *this;
  auto rep = std::make_shared<MapRep>();
  for (const auto& p : as_map())
    if (p.first != key) rep->entries.push_back(p);
  rep->shape = ShapeOf(rep->entries);
  Value out;
  out.kind_ = Kind::kMap;
  out.rep_ = std::move(rep);
  return out;
}

bool Value::IsConcrete() const {
  switch (kind_) {
    case Kind::kSym:
      return false;
    case Kind::kList:
      return static_cast<const ListRep*>(rep_.get())->shape.concrete;
    case Kind::kMap:
      return static_cast<const MapRep*>(rep_.get())->shape.concrete;
    case Kind::kOption:
      return !has_value() || static_cast<const OptionRep*>(rep_.get())->shape.concrete;
    default:
      return true;
  }
}

uint64_t Value::TreeSize() const {
  switch (kind_) {
    case Kind::kSym:
      return as_term()->tree_size;
    case Kind::kList:
      return static_cast<const ListRep*>(rep_.get())->shape.tree_size;
    case Kind::kMap:
      return static_cast<const MapRep*>(rep_.get())->shape.tree_size;
    case Kind::kOption:
      return has_value() ? static_cast<const OptionRep*>(rep_.get())->shape.tree_size : 1;
    default:
      return 1;
  }
}

uint32_t Value::Depth() const {
  switch (kind_) {
    case Kind::kSym:
      return as_term()->depth;
    case Kind::kList:
      return static_cast<const ListRep*>(rep_.get())->shape.depth;
    case Kind::kMap:
      return static_cast<const MapRep*>(rep_.get())->shape.depth;
    case Kind::kOption:
      return has_value() ? static_cast<const OptionRep*>(rep_.get())->shape.depth : 1;
    default:
      return 1;
  }
}

uint64_t Value::Hash() const {
  switch (kind_) {
    case Kind::kNull:
      return 0x9e3779b97f4a7c15ull;
    case Kind::kBool:
    case Kind::kInt:
      return absl::HashOf(static_cast<int>(kind_), i_);
    case Kind::kString:
      return absl::HashOf(3, as_string());
    case Kind::kList: {
      auto* rep = static_cast<const ListRep*>(rep_.get());
      if (uint64_t known = rep->hash.load(std::memory_order_relaxed)) return known;
      uint64_t h = 4;
      for (const auto& x : rep->items) h = absl::HashOf(h, x.Hash());
      h = h ? h : 1;
      rep->hash.store(h, std::memory_order_relaxed);
      return h;
    }
    case Kind::kMap: {
      auto* rep = static_cast<const MapRep*>(rep_.get());
      if (uint64_t known = rep->hash.load(std::memory_order_relaxed)) return known;
      uint64_t h = 5;
      for (const auto& [k, x] : rep->entries) h = absl::HashOf(h, k, x.Hash());
      h = h ? h : 1;
      rep->hash.store(h, std::memory_order_relaxed);
      return h;
    }
    case Kind::kOption:
      return has_value() ? absl::HashOf(6, inner().Hash()) : 7;
    case Kind::kSym:
      return absl::HashOf(8, as_term()->hash);
  }
  return 0;
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind_ != b.kind_) return false;
  if (a.rep_ == b.rep_ && a.i_ == b.i_) return true;
  switch (a.kind_) {
    case Value::Kind::kNull:
      return true;
    case Value::Kind::kBool:
    case Value::Kind::kInt:
      return a.i_ == b.i_;
    case Value::Kind::kString:
      return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      if (a.as_list().size() != b.as_list().size() || a.Hash() != b.Hash()) return false;
      return a.as_list() == b.as_list();
    }
    case Value::Kind::kMap: {
      if (a.Hash() != b.Hash()) return false;
      return a.as_map() == b.as_map();
    }
    case Value::Kind::kOption:
      return a.i_ == b.i_ && (!a.i_ || a.inner() == b.inner());
    case Value::Kind::kSym:
      return sym::TermEqual(a.as_term(), b.as_term());
  }
  return false;
}

std::string Value::ToString() const {
  std::string out;
  AppendValue(*this, &out);
  return out;
}

const char* Value::KindName(Kind k) {
  switch (k) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kString:
      return "string";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kOption:
      return "option";
    case Kind::kSym:
      return "symbolic";
  }
  return "?";
}

namespace {

// v with the bindings applied, sharing every part they leave as it was
// (explanations hold many messages with unbound `fresh` values, and a
// binding of one must not copy the others); *changed when any part changed.
Value Substituted(const Value& v, const sym::Bindings& b, bool* changed) {
  if (v.IsConcrete()) return v;
  switch (v.kind()) {
    case Value::Kind::kSym: {
      sym::TermRef t = sym::Substitute(v.as_term(), b);
      if (t.get() == v.as_term().get()) return v;
      *changed = true;
      return Value::Sym(std::move(t));
    }
    case Value::Kind::kList: {
      std::vector<Value> items;
      items.reserve(v.as_list().size());
      bool any = false;
      for (const auto& x : v.as_list()) items.push_back(Substituted(x, b, &any));
      if (!any) return v;
      *changed = true;
      return Value::List(std::move(items));
    }
    case Value::Kind::kMap: {
      MapEntries e;
      e.reserve(v.as_map().size());
      bool any = false;
      for (const auto& [k, x] : v.as_map()) e.emplace_back(k, Substituted(x, b, &any));
      if (!any) return v;
      *changed = true;
      return Value::Map(std::move(e));
    }
    case Value::Kind::kOption: {
      bool any = false;
      Value inner = Substituted(v.inner(), b, &any);
      if (!any) return v;
      *changed = true;
      return Value::Some(std::move(inner));
    }
    default:
      return v;
  }
}

}  // namespace

Value SubstituteValue(const Value& v, const sym::Bindings& b) {
  bool changed = false;
  return Substituted(v, b, &changed);
}

void CollectValueVars(const Value& v, std::vector<sym::TermRef>* out) {
  switch (v.kind()) {
    case Value::Kind::kSym:
      sym::CollectVars(v.as_term(), out);
      return;
    case Value::Kind::kList:
      for (const auto& x : v.as_list()) CollectValueVars(x, out);
      return;
    case Value::Kind::kMap:
      for (const auto& [k, x] : v.as_map()) CollectValueVars(x, out);
      return;
    case Value::Kind::kOption:
      if (v.has_value()) CollectValueVars(v.inner(), out);
      return;
    default:
      return;
  }
}

}  // namespace dualswarm::ir
