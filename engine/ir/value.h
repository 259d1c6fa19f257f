// Value: the JSON-like intermediate representation shared by messages, spec
// state and the interpreter. Immutable and cheap to copy (payloads are
// shared); "updates" return new values that share unchanged parts.
// Kinds: null, bool, int, string, list, map (string keys, also used for
// records), option (none / some(v)) and symbolic (a sym::TermRef of sort
// bool, int or string).
#ifndef DUALSWARM_ENGINE_IR_VALUE_H_
#define DUALSWARM_ENGINE_IR_VALUE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "engine/sym/term.h"

namespace dualswarm::ir {

class Value;
using MapEntries = std::vector<std::pair<std::string, Value>>;  // sorted by key

class Value {
 public:
  enum class Kind : uint8_t { kNull, kBool, kInt, kString, kList, kMap, kOption, kSym };

  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value String(std::string s);
  static Value List(std::vector<Value> items);
  // Entries need not be sorted; later duplicates win.
  static Value Map(MapEntries entries);
  static Value None();
  static Value Some(Value v);
  // A constant term becomes the matching concrete value.
  static Value Sym(sym::TermRef t);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_option() const { return kind_ == Kind::kOption; }
  bool is_sym() const { return kind_ == Kind::kSym; }

  bool as_bool() const { return i_ != 0; }
  int64_t as_int() const { return i_; }
  const std::string& as_string() const;
  const std::vector<Value>& as_list() const;
  const MapEntries& as_map() const;
  bool has_value() const { return i_ != 0; }  // option
  const Value& inner() const;                 // some(v) -> v
  const sym::TermRef& as_term() const;
  // Sort of a scalar (bool/int/string, concrete or symbolic).
  std::optional<sym::Sort> scalar_sort() const;
  // Converts a scalar to a term (constants for concrete scalars).
  sym::TermRef ToTerm() const;

  // Map operations (persistent).
  const Value* Find(absl::string_view key) const;  // nullptr when absent
  Value Set(absl::string_view key, Value v) const;
  Value Remove(absl::string_view key) const;

  // True when no symbolic term occurs anywhere inside (O(1): kept by the
  // constructors).
  bool IsConcrete() const;
  // The value's size as a tree: 1 per null/bool/int/string/list/map/option
  // node, a symbolic leaf counts its term's tree size; shared parts are
  // counted every time they occur (walks such as ==, printing and
  // substitution visit them that often). Saturates (sym::kSaturatedSize).
  uint64_t TreeSize() const;
  // Nesting depth: 1 for a scalar, a symbolic leaf its term's depth.
  uint32_t Depth() const;

  uint64_t Hash() const;
  friend bool operator==(const Value& a, const Value& b);
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }

  // Compact JSON-ish text (options as none / some(...), terms in spec syntax).
  std::string ToString() const;
  static const char* KindName(Kind k);

 private:
  Kind kind_ = Kind::kNull;
  int64_t i_ = 0;
  std::shared_ptr<const void> rep_;
};

// Substitutes bound variables throughout a value.
Value SubstituteValue(const Value& v, const sym::Bindings& b);
// Appends every distinct variable occurring in v.
void CollectValueVars(const Value& v, std::vector<sym::TermRef>* out);

}  // namespace dualswarm::ir

#endif  // DUALSWARM_ENGINE_IR_VALUE_H_
