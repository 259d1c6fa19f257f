// The coordinator's database schema as an ordered list of migrations.
// Migration N is applied once, in order, inside the transaction that records
// it in schema_migrations; a released migration is never edited — change
// the schema by appending a new one.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_MIGRATIONS_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_MIGRATIONS_H_

#include <vector>

namespace dualswarm::coord {

struct Migration {
  int version;       // 1, 2, 3, ... without gaps
  const char* name;  // short description, recorded with the version
  const char* sql;   // one or more statements, no parameters
};

const std::vector<Migration>& Migrations();

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_MIGRATIONS_H_
