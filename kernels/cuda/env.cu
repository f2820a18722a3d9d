// Cached environment lookups for tg_env_long (tg_internal.cuh).
#include "tg_internal.cuh"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

struct Entry {
    const char *key; // the caller's literal: compared by address first
    char name[48];
    bool set;
    long value;
};

constexpr int kEntries = 128;
std::mutex mu;
Entry entries[kEntries];
int used = 0;

bool parse(const char *s, long *out) {
    if (!s || !*s) return false;
    char *end = nullptr;
    const long v = strtol(s, &end, 10);
    if (!end || *end != 0) return false;
    *out = v;
    return true;
}

} // namespace

long tg_env_long(const char *name, long dflt) {
    std::lock_guard<std::mutex> lock(mu);
    for (int i = 0; i < used; i++)
        if (entries[i].key == name) return entries[i].set ? entries[i].value : dflt;
    for (int i = 0; i < used; i++) // the same name from another literal
        if (strcmp(entries[i].name, name) == 0) return entries[i].set ? entries[i].value : dflt;
    long v = 0;
    const bool set = parse(getenv(name), &v);
    if (used < kEntries && strlen(name) < sizeof entries[0].name) {
        Entry &e = entries[used++];
        e.key = name;
        strcpy(e.name, name);
        e.set = set;
        e.value = v;
    }
    return set ? v : dflt;
}

void tg_env_forget(void) {
    std::lock_guard<std::mutex> lock(mu);
    used = 0;
}
