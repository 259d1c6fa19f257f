// ds-ref-sync: a reference file synchronizer of two directory trees, as
// Balasubramaniam and Pierce define one ("What is a file synchronizer?",
// 1998; specs/filesync.dspec states it), with seeded-bug mutants
// (MUTANTS.md).
//
//   ds-ref-sync A B ARCHIVE [--mutant N]
//
// ARCHIVE is the synchronizer's own file: what both replicas held after
// the last sync, one entry per line ("D\tPATH\t\tMODE",
// "F\tPATH\tHEXDATA\tMODE" or "L\tPATH\tHEXTARGET\t0", MODE in octal);
// missing means an empty archive. Files, directories (with their modes;
// a directory's set after what it holds) and symbolic links (copied as
// links, never followed); no times. Exit 0: reconciled; 1: some paths
// conflicted and were left alone; 3: an error (message on stderr).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Entry {
  bool dir = false;
  std::string data;   // a file's contents, a link's target
  bool link = false;  // a symbolic link (never followed)
  unsigned mode = 0;  // a file's or directory's permission bits
  friend bool operator==(const Entry& x, const Entry& y) {
    return x.dir == y.dir && x.data == y.data && x.link == y.link && x.mode == y.mode;
  }
};

using Tree = std::map<std::string, Entry>;  // relative path -> entry

int g_mutant = 0;

[[noreturn]] void Die(const std::string& why) {
  std::cerr << "ds-ref-sync: " << why << "\n";
  std::exit(3);
}

unsigned ModeOf(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) Die("lstat " + p.string());
  return st.st_mode & 07777;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Tree Scan(const fs::path& root) {
  Tree t;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; it != end; it.increment(ec)) {
    if (ec) Die("scanning " + root.string() + ": " + ec.message());
    std::string rel = it->path().lexically_relative(root).generic_string();
    if (it->is_symlink()) {
      t[rel] = Entry{false, fs::read_symlink(it->path(), ec).string(), true};
      continue;
    }
    if (it->is_directory()) {
      t[rel] = Entry{true, "", false, ModeOf(it->path())};
    } else if (it->is_regular_file()) {
      t[rel] = Entry{false, ReadFile(it->path()), false, ModeOf(it->path())};
    }
  }
  if (ec) Die("scanning " + root.string() + ": " + ec.message());
  return t;
}

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : s) {
    out += d[ch >> 4];
    out += d[ch & 15];
  }
  return out;
}
std::string Unhex(const std::string& s) {
  std::string out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) out += static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16));
  return out;
}

Tree LoadArchive(const fs::path& file) {
  Tree t;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    unsigned mode = f.size() > 3 ? static_cast<unsigned>(std::stoul(f[3], nullptr, 8)) : 0;
    if (f.size() >= 2 && f[0] == "D") t[f[1]] = Entry{true, "", false, mode};
    if (f.size() >= 2 && (f[0] == "F" || f[0] == "L"))
      t[f[1]] = Entry{false, f.size() > 2 ? Unhex(f[2]) : "", f[0] == "L", mode};
  }
  return t;
}

void SaveArchive(const fs::path& file, const Tree& t) {
  fs::path tmp = file.string() + ".new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [p, e] : t)
      out << (e.dir    ? "D\t"
              : e.link ? "L\t"
                       : "F\t")
          << p << "\t" << Hex(e.data) << "\t" << std::oct << e.mode << std::dec << "\n";
    if (!out) Die("writing " + tmp.string());
  }
  fs::rename(tmp, file);
}

bool Under(const std::string& k, const std::string& p) {
  return p.empty() || k == p || (k.size() > p.size() && k.compare(0, p.size(), p) == 0 && k[p.size()] == '/');
}

Tree Subtree(const Tree& t, const std::string& p) {
  Tree out;
  for (const auto& [k, e] : t)
    if (Under(k, p)) out[k] = e;
  return out;
}

void ReplaceSubtree(Tree* t, const std::string& p, const Tree& with) {
  for (auto it = t->begin(); it != t->end();) it = Under(it->first, p) ? t->erase(it) : std::next(it);
  for (const auto& [k, e] : with) (*t)[k] = e;
}

void SetMode(const fs::path& p, unsigned mode) {
  if (::chmod(p.c_str(), mode) != 0) Die("chmod " + p.string());
}

// Makes the replica at `root` hold `with` at and under p (on disk).
void Apply(const fs::path& root, const std::string& p, const Tree& with) {
  std::error_code ec;
  if (p.empty()) Die("copying a whole replica");  // Path goes down into the top instead
  fs::remove_all(root / p, ec);
  if (ec) Die("removing " + (root / p).string() + ": " + ec.message());
  for (const auto& [k, e] : with) {  // parents sort before their children
    if (e.dir) {
      fs::create_directory(root / k, ec);
      if (ec) Die("mkdir " + (root / k).string() + ": " + ec.message());
      SetMode(root / k, 0755);  // its own mode once what it holds is in (below)
    } else if (e.link) {
      fs::create_symlink(e.data, root / k, ec);
      if (ec) Die("symlink " + (root / k).string() + ": " + ec.message());
    } else {
      {
        std::ofstream out(root / k, std::ios::binary | std::ios::trunc);
        out << e.data;
        if (!out) Die("writing " + (root / k).string());
      }
      SetMode(root / k, e.mode);
    }
  }
  // Directories' modes last, the deepest first: a directory of mode 0500
  // takes no new entries, even from its owner.
  for (auto it = with.rbegin(); it != with.rend(); ++it)
    if (it->second.dir) SetMode(root / it->first, it->second.mode);
}

bool IsDir(const Tree& t, const std::string& p) {
  if (p.empty()) return true;
  auto it = t.find(p);
  return it != t.end() && it->second.dir;
}

std::set<std::string> Children(const std::string& p, const std::vector<const Tree*>& trees) {
  std::set<std::string> out;
  for (const Tree* t : trees)
    for (const auto& [k, e] : *t) {
      if (p.empty() ? k.find('/') == std::string::npos
                    : Under(k, p) && k != p && k.find('/', p.size() + 1) == std::string::npos)
        out.insert(k);
    }
  return out;
}

struct Sync {
  fs::path ra, rb;
  Tree a, b, o;
  int conflicts = 0;

  void Propagate(const std::string& p, const Tree& from, const fs::path& to_root, Tree* to) {
    Apply(to_root, p, from);
    ReplaceSubtree(to, p, from);
    ReplaceSubtree(&o, p, from);
  }

  // A directory both replicas hold: its own entry (its mode) is
  // reconciled as a file's content is (the spec's sync_dir_mode).
  void DirMode(const std::string& p) {
    const Entry ea = a.at(p), eb = b.at(p);
    auto in_o = o.find(p);
    const bool o_is_a = in_o != o.end() && in_o->second == ea, o_is_b = in_o != o.end() && in_o->second == eb;
    if (ea == eb) {
      o[p] = ea;
    } else if (o_is_b) {
      SetMode(rb / p, ea.mode);
      b[p] = ea;
      o[p] = ea;
    } else if (o_is_a) {
      SetMode(ra / p, eb.mode);
      a[p] = eb;
      o[p] = eb;
    } else {
      ++conflicts;
    }
  }

  // Reconciles path p. Where both replicas hold a directory it goes down
  // into the children (for a path dirty on one side only that copies the
  // same as copying the whole subtree, as the spec says).
  void Path(const std::string& p) {
    Tree sa = Subtree(a, p), sb = Subtree(b, p), so = Subtree(o, p);
    bool dirty_a = sa != so, dirty_b = sb != so;
    if (!dirty_a && !dirty_b) return;
    if (IsDir(a, p) && IsDir(b, p)) {
      // Mutant 6: a directory changed on both sides is one conflict, even
      // when the changes touch different files under it.
      if (g_mutant == 6 && dirty_a && dirty_b && !p.empty()) {
        ++conflicts;
        return;
      }
      if (!p.empty()) DirMode(p);
      for (const std::string& c : Children(p, {&a, &b, &o})) Path(c);
      return;
    }
    // Mutant 2: a deletion is not propagated, but the archive records it.
    // Mutant 3: a new directory is not propagated, but the archive records it.
    auto skipped_but_recorded = [&](const Tree& from) {
      bool deleted = from.empty() && !so.empty();
      bool new_dir = so.empty() && IsDir(from, p);
      if ((g_mutant == 2 && deleted) || (g_mutant == 3 && new_dir)) {
        ReplaceSubtree(&o, p, from);
        return true;
      }
      return false;
    };
    if (dirty_a && !dirty_b) {
      if (!skipped_but_recorded(sa)) Propagate(p, sa, rb, &b);
    } else if (dirty_b && !dirty_a) {
      if (!skipped_but_recorded(sb)) Propagate(p, sb, ra, &a);
    } else if (sa == sb) {
      ReplaceSubtree(&o, p, sa);  // the same change on both sides
    } else {
      ++conflicts;
      // Mutant 1: on a conflict a's version wins.
      if (g_mutant == 1) Propagate(p, sa, rb, &b);
      // Mutant 5: on a conflict the archive takes a's version (a later
      // sync then copies a over b's change).
      if (g_mutant == 5) ReplaceSubtree(&o, p, sa);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--mutant" && i + 1 < argc) {
      g_mutant = std::atoi(argv[++i]);
    } else if (s == "--help") {
      std::cout << "usage: ds-ref-sync A B ARCHIVE [--mutant N]\n";
      return 0;
    } else {
      pos.push_back(s);
    }
  }
  if (pos.size() != 3) Die("usage: ds-ref-sync A B ARCHIVE [--mutant N]");
  Sync s;
  s.ra = pos[0];
  s.rb = pos[1];
  if (!fs::is_directory(s.ra) || !fs::is_directory(s.rb)) Die("A and B must be directories");
  s.a = Scan(s.ra);
  s.b = Scan(s.rb);
  s.o = LoadArchive(pos[2]);
  s.Path("");
  SaveArchive(pos[2], s.o);
  // Mutant 4: exit 0 on a conflict.
  if (s.conflicts > 0 && g_mutant != 4) return 1;
  return 0;
}
