// Column tables, internal to the store (store/rows.h holds one per row
// struct): each column says once what is selected, the name it is selected
// AS, and which member of the row it is read into (by that name, never by
// position). A table gives both the SELECT list and the reader, so a column
// cannot be selected and not read, or read and not selected.
//
// A column is read by the type of its member: integers through I64 (NULL is
// 0), text through Str, enums as their words (Word), string lists from
// comma-joined text (SplitList); bytea columns through HexCol (selected as
// hex text, decoded into a std::string). Read from a jsonb object's text
// instead (FromJson), integers go through FromText and booleans are "true".
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_COLUMNS_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_COLUMNS_H_

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/store/sql.h"

namespace dualswarm::coord {

// A column holding an enum's word ('cancelled'), as the enum; the zero
// value for '' (a job's outcome before completion).
template <typename E>
E Word(const pqxx::field& f) {
  return wire::EnumFromWord<E>(Str(f));
}

// A field into a member, by the member's type.
inline void ReadValue(const pqxx::field& f, int64_t& out) { out = I64(f); }
inline void ReadValue(const pqxx::field& f, int& out) { out = Int(f); }
inline void ReadValue(const pqxx::field& f, uint64_t& out) { out = U64(f); }
inline void ReadValue(const pqxx::field& f, bool& out) { out = Bool(f); }
inline void ReadValue(const pqxx::field& f, std::string& out) { out = Str(f); }
inline void ReadValue(const pqxx::field& f, std::vector<std::string>& out) { out = SplitList(Str(f)); }
template <typename E>
requires std::is_enum_v<E>
void ReadValue(const pqxx::field& f, E& out) { out = Word<E>(f); }

// A jsonb value's text (->>) into a member: protobuf's JSON mapping writes
// 64-bit integers as strings and booleans as true/false.
template <typename T>
constexpr bool kHasJsonText = std::is_same_v<T, std::string> || std::is_same_v<T, bool> || std::is_integral_v<T>;
template <typename T>
void ReadJsonText(const pqxx::field& f, T& out) {
  if constexpr (std::is_same_v<T, std::string>) {
    out = Str(f);
  } else if constexpr (std::is_same_v<T, bool>) {
    out = Str(f) == "true";
  } else {
    out = FromText<T>(f);
  }
}

// The struct a member pointer points into, and the member's type.
template <typename P>
struct MemberOf;
template <typename C, typename M>
struct MemberOf<M C::*> {
  using Class = C;
  using Type = M;
};

template <typename Row>
struct Column {
  using Reader = std::function<void(const pqxx::field&, Row&)>;
  std::string name;       // selected AS this; read by it
  std::string expr;       // what is selected ("" = the column `name`)
  Reader read;            // the field into the row, by the member's type
  Reader read_json_text;  // the same from jsonb text (empty: not possible)
};

// The column `name` (selected as `expr` when given), read into the member
// reached from Row by the member pointers Path (one, or a path into nested
// structs: &RunRow::counts, &JobCounts::queued).
template <auto First, auto... Rest>
auto Col(std::string name, std::string expr = "") {
  using Row = typename MemberOf<decltype(First)>::Class;
  using Value = std::remove_reference_t<decltype(((std::declval<Row&>().*First).*....*Rest))>;
  Column<Row> c{std::move(name), std::move(expr),
                [](const pqxx::field& f, Row& row) { ReadValue(f, ((row.*First).*....*Rest)); }, nullptr};
  if constexpr (kHasJsonText<Value>) {
    c.read_json_text = [](const pqxx::field& f, Row& row) { ReadJsonText(f, ((row.*First).*....*Rest)); };
  }
  return c;
}

// The bytea column `column` as the bytes in the std::string member Member,
// selected AS `name`: PostgreSQL sends it as hex text (encode), which reads
// the same in every libpqxx version, and the reader decodes it. Bytes are
// written the other way round: Hex() text as a parameter, decode($n, 'hex').
template <auto Member>
auto HexCol(std::string name, absl::string_view column) {
  using Row = typename MemberOf<decltype(Member)>::Class;
  static_assert(std::is_same_v<typename MemberOf<decltype(Member)>::Type, std::string>);
  return Column<Row>{std::move(name), absl::StrCat("encode(", column, ", 'hex')"),
                     [](const pqxx::field& f, Row& row) { row.*Member = absl::HexStringToBytes(Str(f)); }, nullptr};
}

// A row struct's columns: its SELECT list and its reader.
template <typename Row>
class Columns {
 public:
  explicit Columns(std::vector<Column<Row>> columns) : columns_(std::move(columns)) {
    list_ = absl::StrJoin(columns_, ", ", [](std::string* out, const Column<Row>& c) {
      absl::StrAppend(out, c.expr.empty() ? c.name : absl::StrCat(c.expr, " AS ", c.name));
    });
  }

  // "expr AS name, ...", for a SELECT or RETURNING.
  const std::string& list() const { return list_; }
  // "SELECT <list> <from>"; `from` is the rest of the query.
  std::string Select(absl::string_view from) const { return absl::StrCat("SELECT ", list_, " ", from); }

  Row Read(const pqxx::row& r) const {
    Row row{};
    for (const Column<Row>& c : columns_) c.read(r[c.name], row);
    return row;
  }
  // Read as a callable, for ReadOne and ReadPage.
  auto reader() const {
    return [this](const pqxx::row& r) { return Read(r); };
  }

  // These columns followed by `more`.
  Columns operator+(const Columns& more) const {
    std::vector<Column<Row>> all = columns_;
    all.insert(all.end(), more.columns_.begin(), more.columns_.end());
    return Columns(std::move(all));
  }

  // The same columns taken from table `alias` ("alias.name AS name");
  // columns with an expression keep it (it names its own tables).
  Columns Qualified(absl::string_view alias) const {
    return Map([&](Column<Row> c) {
      if (c.expr.empty()) c.expr = absl::StrCat(alias, ".", c.name);
      return c;
    });
  }

  // The same columns as the fields of the jsonb object `object`, in
  // protobuf's JSON mapping (lowerCamelCase names, values as text).
  Columns FromJson(absl::string_view object) const {
    return Map([&](Column<Row> c) {
      if (!c.read_json_text) throw std::logic_error(absl::StrCat("column ", c.name, " has no JSON text form"));
      c.expr = absl::StrCat(object, "->>'", LowerCamel(c.name), "'");
      c.read = c.read_json_text;
      return c;
    });
  }

  // The same columns read into the member Member of the struct holding a Row.
  template <auto Member>
  auto Within() const {
    using Outer = typename MemberOf<decltype(Member)>::Class;
    std::vector<Column<Outer>> out;
    for (const Column<Row>& c : columns_) {
      auto into = [](typename Column<Row>::Reader read) -> typename Column<Outer>::Reader {
        if (!read) return nullptr;
        return [read](const pqxx::field& f, Outer& outer) { read(f, outer.*Member); };
      };
      out.push_back({c.name, c.expr, into(c.read), into(c.read_json_text)});
    }
    return Columns<Outer>(std::move(out));
  }

 private:
  template <typename F>
  Columns Map(F change) const {
    std::vector<Column<Row>> out;
    for (const Column<Row>& c : columns_) out.push_back(change(c));
    return Columns(std::move(out));
  }

  static std::string LowerCamel(absl::string_view snake) {
    std::string out;
    bool upper = false;
    for (char ch : snake) {
      if (ch == '_') {
        upper = true;
        continue;
      }
      out.push_back(upper ? absl::ascii_toupper(ch) : ch);
      upper = false;
    }
    return out;
  }

  std::vector<Column<Row>> columns_;
  std::string list_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_COLUMNS_H_
