/* tg_settings.h: the defaults and valid values of tg_settings (trigrid.h),
 * in one table shared by the CUDA library, the plain-C reference library
 * and the kernels' conformance tool. Plain C99 and C++. Not part of the
 * public ABI: callers ask tg_settings_default and tg_ctx_set_settings. */
#ifndef TG_SETTINGS_H
#define TG_SETTINGS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "trigrid.h"

typedef struct {
    const char *name; /* the field's name in tg_settings */
    size_t offset;
    int32_t def;      /* the default */
    int32_t lo, hi;   /* valid range, when nchoices == 0 */
    int32_t can_auto; /* TG_SETTING_AUTO is valid too */
    int32_t nchoices; /* > 0: only these values */
    int32_t choices[4];
} tg_setting_desc;

#define TG_SD(f) #f, offsetof(tg_settings, f)
#define TG_SD_AUTO TG_SETTING_AUTO

static const tg_setting_desc tg_setting_descs[TG_SETTINGS_FIELDS] = {
    {TG_SD(slot_bitmap), 1, 0, 1, 0, 0, {0}},
    {TG_SD(trix_ratio), 2, 0, 1 << 20, 0, 0, {0}},
    {TG_SD(trix_window), 2048, 0, 2048, 0, 0, {0}},
    {TG_SD(trix_spread), 8, 0, 0, 0, 3, {4, 8, 16}},
    {TG_SD(trix_minb), 8, 0, 0, 0, 2, {1, 8}},
    {TG_SD(grouptc_ratio), 2, 0, 1 << 20, 0, 0, {0}},
    {TG_SD(grouptc_window), 2048, 0, 2048, 0, 0, {0}},
    {TG_SD(grouptc_spread), 8, 0, 0, 0, 3, {4, 8, 16}},
    {TG_SD(grouptc_minb), 8, 0, 0, 0, 2, {1, 8}},
    {TG_SD(trust_warpmax), TG_SD_AUTO, 1, 128, 1, 0, {0}},
    {TG_SD(trust_cta_smem), TG_SD_AUTO, 0, 65536, 1, 0, {0}},
    {TG_SD(trust_cta_threads), 256, 0, 0, 0, 3, {128, 256, 512}},
    {TG_SD(trust_bitmap), 1, 0, 1, 0, 0, {0}},
    {TG_SD(wetric_erow), 1, 0, 1, 0, 0, {0}},
    {TG_SD(wetric_bitmap), TG_SD_AUTO, 0, 4096, 1, 0, {0}},
    {TG_SD(wetric_spread), TG_SD_AUTO, 0, 0, 1, 4, {4, 8, 16, 32}},
    {TG_SD(wetric_edges), 256, 0, 0, 0, 2, {64, 256}},
    {TG_SD(wetric_fillrpw), 4, 1, 32, 0, 0, {0}},
    {TG_SD(wetric_bmmin), 4, 1, 1 << 20, 0, 0, {0}},
    {TG_SD(wetric_andcost), 4, 0, 64, 0, 0, {0}},
    {TG_SD(wetric_andmin), 8, 0, 1 << 16, 0, 0, {0}},
    {TG_SD(wetric_and4cost), 4, 0, 64, 0, 0, {0}},
    {TG_SD(wetric_lb), TG_SD_AUTO, 0, 0, 1, 3, {1, 6, 8}},
    {TG_SD(wetric_skipb), 1, 0, 1, 0, 0, {0}},
    {TG_SD(wetric_rowcache), 1, 0, 1, 0, 0, {0}},
    {TG_SD(wetric_skipa), 1, 0, 1, 0, 0, {0}},
    {TG_SD(wetric_overlap), 1, 0, 1, 0, 0, {0}},
    {TG_SD(wetric_narrow), 1, 0, 1, 0, 0, {0}},
    {TG_SD(ranges_dense), 512, 0, 8192, 0, 0, {0}},
};

#undef TG_SD
#undef TG_SD_AUTO

static inline int32_t *tg_setting_field(tg_settings *s, int i) {
    return (int32_t *)((char *)s + tg_setting_descs[i].offset);
}

static inline void tg_settings_fill_default(tg_settings *s) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < TG_SETTINGS_FIELDS; i++) *tg_setting_field(s, i) = tg_setting_descs[i].def;
}

/* Whether v is valid for field i. */
static inline int tg_setting_ok(int i, int32_t v) {
    const tg_setting_desc *d = &tg_setting_descs[i];
    if (v == TG_SETTING_AUTO) return d->can_auto;
    if (d->nchoices > 0) {
        for (int k = 0; k < d->nchoices; k++)
            if (d->choices[k] == v) return 1;
        return 0;
    }
    return v >= d->lo && v <= d->hi;
}

/* Writes what field i accepts into buf. */
static inline void tg_setting_valid(int i, char *buf, size_t n) {
    const tg_setting_desc *d = &tg_setting_descs[i];
    size_t w = 0;
    buf[0] = 0;
    if (d->nchoices > 0) {
        for (int k = 0; k < d->nchoices && w < n; k++)
            w += (size_t)snprintf(buf + w, n - w, "%s%d", k ? ", " : "one of ", (int)d->choices[k]);
    } else {
        w += (size_t)snprintf(buf, n, "%d..%d", (int)d->lo, (int)d->hi);
    }
    if (d->can_auto && w < n) snprintf(buf + w, n - w, " or %d (auto)", TG_SETTING_AUTO);
}

/* Index of the first invalid field of s, or -1. */
static inline int tg_settings_invalid(const tg_settings *s) {
    for (int i = 0; i < TG_SETTINGS_FIELDS; i++)
        if (!tg_setting_ok(i, *tg_setting_field((tg_settings *)s, i))) return i;
    return -1;
}

/* Sets the field called name (len bytes) to v; returns 0, or -1 for an
 * unknown name or an invalid value. */
static inline int tg_setting_set(tg_settings *s, const char *name, size_t len, int32_t v) {
    for (int i = 0; i < TG_SETTINGS_FIELDS; i++) {
        const char *f = tg_setting_descs[i].name;
        if (strlen(f) == len && strncmp(f, name, len) == 0) {
            if (!tg_setting_ok(i, v)) return -1;
            *tg_setting_field(s, i) = v;
            return 0;
        }
    }
    return -1;
}

#endif
