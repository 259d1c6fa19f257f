// util/huge_pages.h: once called, memory the heap takes from the system
// lies in mappings marked for transparent huge pages (VmFlags "hg" in
// /proc/self/smaps), unless the build keeps glibc's malloc.
#include "util/huge_pages.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace dualswarm {
namespace {

// The VmFlags line of the mapping that holds `p` ("" when none does).
std::string VmFlagsOf(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> from >> dash >> to && dash == '-' && line.find(' ') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      inside = from <= at && at < to;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(HugePages, TheHeapGrowsInMappingsMarkedForHugePages) {
  UseHugePagesForTheHeap();
  UseHugePagesForTheHeap();  // idempotent
  constexpr size_t kBytes = size_t{64} << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  std::memset(block.get(), 1, kBytes);
  const std::string flags = VmFlagsOf(block.get() + kBytes / 2);
  ASSERT_FALSE(flags.empty()) << "no mapping holds the block";
#ifdef DS_TCMALLOC
  // A kernel without transparent huge pages has no such directory (and
  // refuses the advice): then the call only must not hurt.
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good()) {
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
#else
  EXPECT_EQ(flags.find(" hg"), std::string::npos) << flags;  // glibc's malloc: left alone
#endif
}

}  // namespace
}  // namespace dualswarm
