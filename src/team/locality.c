/*
 * Hardware locality: every team's domain hierarchy, built from the units'
 * hardware records (hwinfo.c), and the operations of dart_locality.h on
 * hierarchies.
 *
 * A hierarchy is a tree of individually allocated domains; a domain's
 * children array holds pointers, so that a domain keeps its address while
 * others are added, moved or removed around it. Every edit first allocates
 * all it needs and only then changes the tree: a failed call leaves the
 * tree as it was. After an edit, settle() re-derives what follows from the
 * tree's shape and number_global() the global indices.
 */
#include "team/locality.h"

#include <dart/dart_locality.h>
#include <dart/dart_team_group.h>
#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/runtime.h"
#include "progress/progress.h"
#include "team/group.h"

#define TAG_MAX DART_LOCALITY_DOMAIN_TAG_MAX_SIZE

typedef dart_domain_locality_t domain_t;

/* A team's hierarchy and the records of its units (by team unit id). */
typedef struct {
  domain_t *root;
  dart_unit_locality_t *units;
  int size;
} team_locality_t;

static team_locality_t *team_locs[DART__MAX_TEAMS];

/* This unit's hardware, loaded at the first build after dart_init. */
static dart__team__hwrec_t my_rec;
static bool my_rec_loaded;

/* ======================================================================
 * Unit sets: sorted arrays of distinct global unit ids
 * ====================================================================== */

static int unit_cmp(const void *a, const void *b)
{
  dart_unit_t x = ((const dart_global_unit_t *)a)->id;
  dart_unit_t y = ((const dart_global_unit_t *)b)->id;
  return (x > y) - (x < y);
}

/* Sorts u and drops repeated ids; returns the new count. */
static int units_normalise(dart_global_unit_t *u, int n)
{
  if (n == 0) return 0;
  qsort(u, (size_t)n, sizeof *u, unit_cmp);
  int k = 1;
  for (int i = 1; i < n; i++)
    if (u[i].id != u[k - 1].id) u[k++] = u[i];
  return k;
}

/* a ∪ b (keep_b) or a \ b (!keep_b) into a new array, NULL when empty. */
static dart_ret_t units_combine(const dart_global_unit_t *a, int na,
                                const dart_global_unit_t *b, int nb,
                                bool keep_b, dart_global_unit_t **out,
                                int *nout)
{
  int cap = na + (keep_b ? nb : 0);
  dart_global_unit_t *r = NULL;
  if (cap > 0 && (r = malloc((size_t)cap * sizeof *r)) == NULL)
    return DART_ERR_NOMEM;
  int i = 0, j = 0, n = 0;
  while (i < na || j < nb) {
    if (j == nb || (i < na && a[i].id < b[j].id)) {
      r[n++] = a[i++];
    } else if (i == na || b[j].id < a[i].id) {
      if (keep_b) r[n++] = b[j];
      j++;
    } else {
      if (keep_b) r[n++] = a[i];
      i++;
      j++;
    }
  }
  if (n == 0) {
    free(r);
    r = NULL;
  }
  *out = r;
  *nout = n;
  return DART_OK;
}

/* A new unit list for a domain, applied when an edit commits. */
typedef struct {
  domain_t *d;
  dart_global_unit_t *units;
  int num;
} unit_update_t;

static void updates_discard(unit_update_t *up, int n)
{
  for (int i = 0; i < n; i++) free(up[i].units);
  free(up);
}

static void updates_commit(unit_update_t *up, int n)
{
  for (int i = 0; i < n; i++) {
    free(up[i].d->unit_ids);
    up[i].d->unit_ids = up[i].units;
    up[i].d->num_units = up[i].num;
  }
  free(up);
}

/* ======================================================================
 * Domains: creation, copies, release, tags
 * ====================================================================== */

static domain_t *domain_new(void)
{
  domain_t *d = calloc(1, sizeof *d);
  if (d == NULL) return NULL;
  strcpy(d->domain_tag, ".");
  d->scope = DART_LOCALITY_SCOPE_UNDEFINED;
  d->team = DART_TEAM_NULL;
  d->node_id = -1;
  d->is_symmetric = 1;
  return d;
}

/* Releases what d owns: subdomains and unit list (not d itself). */
static void domain_clear(domain_t *d)
{
  for (int i = 0; i < d->num_domains; i++) {
    domain_clear(d->children[i]);
    free(d->children[i]);
  }
  free(d->children);
  free(d->unit_ids);
  d->children = NULL;
  d->unit_ids = NULL;
  d->num_domains = 0;
  d->num_units = 0;
}

static void domain_free(domain_t *d)
{
  domain_clear(d);
  free(d);
}

/* A deep copy of src whose root has no parent. Aliases are not copied:
 * they would point into src's hierarchy. */
static dart_ret_t domain_copy(const domain_t *src, domain_t **out)
{
  domain_t *d = malloc(sizeof *d);
  if (d == NULL) return DART_ERR_NOMEM;
  *d = *src;
  d->parent = NULL;
  d->aliases = NULL;
  d->num_aliases = 0;
  d->unit_ids = NULL;
  d->children = NULL;
  d->num_units = 0;
  d->num_domains = 0;
  if (src->num_units > 0) {
    d->unit_ids = malloc((size_t)src->num_units * sizeof *d->unit_ids);
    if (d->unit_ids == NULL) goto fail;
    memcpy(d->unit_ids, src->unit_ids,
           (size_t)src->num_units * sizeof *d->unit_ids);
    d->num_units = src->num_units;
  }
  if (src->num_domains > 0) {
    d->children = malloc((size_t)src->num_domains * sizeof *d->children);
    if (d->children == NULL) goto fail;
    for (int i = 0; i < src->num_domains; i++) {
      if (domain_copy(src->children[i], &d->children[i]) != DART_OK)
        goto fail;
      d->children[i]->parent = d;
      d->num_domains = i + 1;
    }
  }
  *out = d;
  return DART_OK;
fail:
  domain_free(d);
  return DART_ERR_NOMEM;
}

static domain_t *root_of(const domain_t *d)
{
  while (d->parent != NULL) d = d->parent;
  return (domain_t *)d;
}

static bool is_runtime_root(const domain_t *d)
{
  return d->team >= 0 && team_locs[d->team] != NULL &&
         team_locs[d->team]->root == d;
}

/* d is a or lies below a */
static bool is_within(const domain_t *d, const domain_t *a)
{
  for (; d != NULL; d = d->parent)
    if (d == a) return true;
  return false;
}

/* A tag is "." or a sequence of ".N" (decimal relative indices). */
static bool tag_valid(const char *tag)
{
  size_t len = strnlen(tag, (size_t)TAG_MAX);
  if (len == 0 || len == (size_t)TAG_MAX || tag[0] != '.') return false;
  if (len == 1) return true;
  for (const char *p = tag; *p;) {
    if (*p++ != '.' || !isdigit((unsigned char)*p)) return false;
    while (isdigit((unsigned char)*p)) p++;
  }
  return true;
}

/* The tag of a parent as the prefix of its subdomains' tags. */
static size_t tag_base_len(const char *tag)
{
  return strcmp(tag, ".") == 0 ? 0 : strlen(tag);
}

/* tag names the domain with tag anc or one below it */
static bool tag_within(const char *tag, const char *anc)
{
  size_t n = tag_base_len(anc);
  return strncmp(tag, anc, n) == 0 && (tag[n] == '\0' || tag[n] == '.');
}

static domain_t *find_tag(const domain_t *d, const char *tag)
{
  if (strcmp(d->domain_tag, tag) == 0) return (domain_t *)d;
  for (int i = 0; i < d->num_domains; i++) {
    if (!tag_within(tag, d->children[i]->domain_tag)) continue;
    domain_t *found = find_tag(d->children[i], tag);
    if (found != NULL) return found;
  }
  return NULL;
}

static int digits(int i)
{
  int n = 1;
  while (i >= 10) {
    i /= 10;
    n++;
  }
  return n;
}

/* Characters that renumbered tags below d add to d's tag. */
static size_t tag_need(const domain_t *d)
{
  size_t need = 0;
  for (int i = 0; i < d->num_domains; i++) {
    size_t n = 1 + (size_t)digits(i) + tag_need(d->children[i]);
    if (n > need) need = n;
  }
  return need;
}

/* Whether the tags fit when a domain tagged parent_tag gets the subdomains
 * children[0..n) and everything below is renumbered. */
static bool tags_fit(const char *parent_tag, domain_t *const *children, int n)
{
  size_t need = 0;
  for (int i = 0; i < n; i++) {
    size_t k = 1 + (size_t)digits(i) + tag_need(children[i]);
    if (k > need) need = k;
  }
  return tag_base_len(parent_tag) + need < (size_t)TAG_MAX;
}

/* Renumbers the tags below d from the subdomains' positions (tags_fit
 * holds). */
static void retag(domain_t *d)
{
  size_t base = tag_base_len(d->domain_tag);
  for (int i = 0; i < d->num_domains; i++) {
    domain_t *c = d->children[i];
    snprintf(c->domain_tag, sizeof c->domain_tag, "%.*s.%d", (int)base,
             d->domain_tag, i);
    retag(c);
  }
}

/* ======================================================================
 * Derived fields
 * ====================================================================== */

/* Domains that stand for no hardware of their own: their cores and shared
 * memory are those of their subdomains. */
static bool is_aggregate(const domain_t *d)
{
  return (int)d->scope < (int)DART_LOCALITY_SCOPE_NODE;
}

/* Nodes below a domain that lies above the nodes, from its subdomains:
 * single-node subdomains count once per node, others with their count. */
static void derive_nodes(domain_t *d)
{
  int nodes = 0, last = -1, single = -1;
  bool ascending = true;
  for (int i = 0; i < d->num_domains; i++) {
    const domain_t *c = d->children[i];
    if (c->num_nodes != 1 || c->node_id < 0) {
      nodes += c->num_nodes > 0 ? c->num_nodes : 0;
      continue;
    }
    bool seen = false;
    if (!ascending || c->node_id <= last) {
      /* unordered node ids (edited trees): look back */
      ascending = false;
      for (int j = 0; j < i && !seen; j++)
        seen = d->children[j]->num_nodes == 1 &&
               d->children[j]->node_id == c->node_id;
    }
    if (c->node_id > last) last = c->node_id;
    if (!seen) {
      nodes++;
      single = c->node_id;
    }
  }
  d->num_nodes = nodes;
  d->node_id = nodes == 1 && single >= 0 ? single : -1;
  /* the common host, if there is one */
  const char *host = d->num_domains > 0 ? d->children[0]->host : "";
  for (int i = 1; i < d->num_domains; i++)
    if (strcmp(host, d->children[i]->host) != 0) host = "";
  snprintf(d->host, sizeof d->host, "%s", host);
}

static void derive_aggregate(domain_t *d)
{
  int cores = 0, shared = INT_MAX;
  for (int i = 0; i < d->num_domains; i++) {
    const domain_t *c = d->children[i];
    if (c->num_cores > 0) cores += c->num_cores;
    if (c->shared_mem_bytes < 0 || shared < 0) shared = -1;
    else if (c->shared_mem_bytes < shared) shared = c->shared_mem_bytes;
  }
  d->num_cores = cores;
  /* memory shared by all units exists within one node only */
  d->shared_mem_bytes = d->num_nodes == 1 && d->num_domains > 0 ? shared : 0;
}

static int is_symmetric(const domain_t *d)
{
  for (int i = 1; i < d->num_domains; i++) {
    const domain_t *a = d->children[0], *b = d->children[i];
    if (a->scope != b->scope || a->num_cores != b->num_cores ||
        a->shared_mem_bytes != b->shared_mem_bytes)
      return 0;
  }
  return 1;
}

/*
 * Re-derives, for d's subtree, what follows from the tree's shape: parent
 * links, levels and relative indices of subdomains; host and node of the
 * domains within a node (node: the nearest NODE domain at or above d, or
 * NULL); nodes and host of the domains above the nodes; cores and shared
 * memory of aggregates; symmetry.
 */
static void settle(domain_t *d, const domain_t *node)
{
  if (d->scope == DART_LOCALITY_SCOPE_NODE) node = d;
  for (int i = 0; i < d->num_domains; i++) {
    domain_t *c = d->children[i];
    c->parent = d;
    c->relative_index = i;
    c->level = d->level + 1;
    settle(c, node);
  }
  if (node != NULL) {
    d->num_nodes = 1;
    if (d != node) {
      d->node_id = node->node_id;
      memcpy(d->host, node->host, sizeof d->host);
    }
  } else if (d->num_domains > 0 || is_aggregate(d)) {
    derive_nodes(d);
  }
  if (is_aggregate(d)) derive_aggregate(d);
  d->is_symmetric = is_symmetric(d);
}

/* Slots of the scope counters of number_global. */
static int scope_slot(dart_locality_scope_t scope)
{
  switch (scope) {
    case DART_LOCALITY_SCOPE_GLOBAL: return 0;
    case DART_LOCALITY_SCOPE_GROUP: return 1;
    case DART_LOCALITY_SCOPE_NETWORK: return 2;
    case DART_LOCALITY_SCOPE_NODE: return 3;
    case DART_LOCALITY_SCOPE_MODULE: return 4;
    case DART_LOCALITY_SCOPE_NUMA: return 5;
    case DART_LOCALITY_SCOPE_UNIT: return 6;
    case DART_LOCALITY_SCOPE_PACKAGE: return 7;
    case DART_LOCALITY_SCOPE_UNCORE: return 8;
    case DART_LOCALITY_SCOPE_CACHE: return 9;
    case DART_LOCALITY_SCOPE_CORE: return 10;
    case DART_LOCALITY_SCOPE_CPU: return 11;
    case DART_LOCALITY_SCOPE_UNDEFINED: return 12;
  }
  return 12;
}

static bool scope_valid(dart_locality_scope_t scope)
{
  return scope != DART_LOCALITY_SCOPE_UNDEFINED && scope_slot(scope) != 12;
}

static void number_domains(domain_t *d, int *next)
{
  d->global_index = next[scope_slot(d->scope)]++;
  for (int i = 0; i < d->num_domains; i++)
    number_domains(d->children[i], next);
}

/* global_index: the position among the domains of the same scope in the
 * depth-first order of the hierarchy. */
static void number_global(domain_t *root)
{
  int next[13] = {0};
  number_domains(root, next);
}

static void settle_hierarchy(domain_t *any)
{
  domain_t *root = root_of(any);
  settle(root, NULL);
  number_global(root);
}

/* ======================================================================
 * Gathering domains
 * ====================================================================== */

typedef struct {
  domain_t **v;
  int n, cap;
} domain_list_t;

static dart_ret_t list_push(domain_list_t *l, domain_t *d)
{
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    domain_t **grown = realloc(l->v, (size_t)cap * sizeof *grown);
    if (grown == NULL) return DART_ERR_NOMEM;
    l->v = grown;
    l->cap = cap;
  }
  l->v[l->n++] = d;
  return DART_OK;
}

/* The domains at scope in d's subtree, depth-first; a domain at scope
 * hides those below it. */
static dart_ret_t gather_scope(const domain_t *d, dart_locality_scope_t scope,
                               domain_list_t *l)
{
  if (d->scope == scope) return list_push(l, (domain_t *)d);
  for (int i = 0; i < d->num_domains; i++) {
    dart_ret_t ret = gather_scope(d->children[i], scope, l);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

static int ptr_cmp(const void *a, const void *b)
{
  uintptr_t x = (uintptr_t)(*(domain_t *const *)a);
  uintptr_t y = (uintptr_t)(*(domain_t *const *)b);
  return (x > y) - (x < y);
}

static bool ptr_in(domain_t *const *sorted, int n, const domain_t *d)
{
  return n > 0 && bsearch(&d, sorted, (size_t)n, sizeof *sorted, ptr_cmp);
}

/*
 * Cuts of contiguous runs: k items with weights w into min(parts, k) runs
 * (ends[p]: one past the last item of run p). Each run ends at the item
 * boundary nearest to its share (p + 1) * total / parts of the weight, the
 * later one on a tie, such that every run keeps at least one item. Without
 * weight, items count one each.
 */
static void balance_runs(const int64_t *w, int k, int parts, int *ends)
{
  if (parts >= k) {
    for (int p = 0; p < k; p++) ends[p] = p + 1;
    return;
  }
  int64_t total = 0;
  for (int i = 0; i < k; i++) total += w[i];
  const bool by_count = total == 0;
  if (by_count) total = k;
  int b = 0;
  int64_t cum = 0; /* weight of the items before b */
  for (int p = 0; p < parts - 1; p++) {
    const int lo = b + 1, hi = k - (parts - 1 - p);
    const int64_t target = (int64_t)(p + 1) * total;
    for (; b < lo; b++) cum += by_count ? 1 : w[b];
    while (b < hi) {
      int64_t next = cum + (by_count ? 1 : w[b]);
      if (llabs(next * parts - target) > llabs(cum * parts - target)) break;
      cum = next;
      b++;
    }
    ends[p] = b;
  }
  ends[parts - 1] = k;
}

/* ======================================================================
 * Edits (all or nothing)
 * ====================================================================== */

typedef struct {
  domain_t *anc;
  const domain_t *cut;
} anc_pair_t;

static int pair_cmp(const void *a, const void *b)
{
  uintptr_t x = (uintptr_t)((const anc_pair_t *)a)->anc;
  uintptr_t y = (uintptr_t)((const anc_pair_t *)b)->anc;
  return (x > y) - (x < y);
}

/* Removes the subtrees cuts[0..n) (disjoint, none of them a root) from
 * their hierarchy: their ancestors lose their units. */
static dart_ret_t remove_subtrees(domain_t *const *cuts, int n)
{
  if (n == 0) return DART_OK;
  int npairs = 0;
  for (int i = 0; i < n; i++)
    for (const domain_t *a = cuts[i]->parent; a; a = a->parent) npairs++;
  anc_pair_t *pairs = malloc((size_t)npairs * sizeof *pairs);
  unit_update_t *up = calloc((size_t)npairs, sizeof *up);
  int nup = 0;
  if (pairs == NULL || up == NULL) goto fail;
  int k = 0;
  for (int i = 0; i < n; i++)
    for (domain_t *a = cuts[i]->parent; a; a = a->parent)
      pairs[k++] = (anc_pair_t){a, cuts[i]};
  qsort(pairs, (size_t)npairs, sizeof *pairs, pair_cmp);
  for (int i = 0; i < npairs;) {
    int j = i, gone_n = 0;
    for (; j < npairs && pairs[j].anc == pairs[i].anc; j++)
      gone_n += pairs[j].cut->num_units;
    dart_global_unit_t *gone = NULL;
    if (gone_n > 0 && (gone = malloc((size_t)gone_n * sizeof *gone)) == NULL)
      goto fail;
    int at = 0;
    for (int c = i; c < j; c++) {
      if (pairs[c].cut->num_units == 0) continue;
      memcpy(gone + at, pairs[c].cut->unit_ids,
             (size_t)pairs[c].cut->num_units * sizeof *gone);
      at += pairs[c].cut->num_units;
    }
    gone_n = units_normalise(gone, gone_n);
    domain_t *anc = pairs[i].anc;
    dart_ret_t ret = units_combine(anc->unit_ids, anc->num_units, gone,
                                   gone_n, false, &up[nup].units,
                                   &up[nup].num);
    free(gone);
    if (ret != DART_OK) goto fail;
    up[nup++].d = anc;
    i = j;
  }
  /* commit: nothing below can fail */
  for (int i = 0; i < n; i++) {
    domain_t *parent = cuts[i]->parent;
    int r = cuts[i]->relative_index;
    if (r >= 0 && r < parent->num_domains && parent->children[r] == cuts[i])
      parent->children[r] = NULL;
    else
      for (int c = 0; c < parent->num_domains; c++)
        if (parent->children[c] == cuts[i]) parent->children[c] = NULL;
    domain_free(cuts[i]);
  }
  for (int i = 0; i < nup; i++) {
    domain_t *d = up[i].d;
    int kept = 0;
    for (int c = 0; c < d->num_domains; c++)
      if (d->children[c] != NULL) d->children[kept++] = d->children[c];
    d->num_domains = kept;
    if (kept == 0) {
      free(d->children);
      d->children = NULL;
    }
  }
  updates_commit(up, nup);
  free(pairs);
  return DART_OK;
fail:
  if (up != NULL) updates_discard(up, nup);
  free(pairs);
  return DART_ERR_NOMEM;
}

/* The domains on the way from d up to the root (d included) that are not
 * in the subtree of avoid's ancestors: what gains or loses units when d's
 * content moves between d's place and avoid's. */
static int ancestors_apart(domain_t *d, const domain_t *avoid,
                           domain_t **out)
{
  int n = 0;
  for (; d != NULL; d = d->parent)
    if (avoid == NULL || !is_within(avoid, d)) {
      if (out != NULL) out[n] = d;
      n++;
    }
  return n;
}

/* New unit lists: units added to (add) or taken from every domain of
 * ds[0..n). */
static dart_ret_t plan_units(domain_t *const *ds, int n,
                             const domain_t *units, bool add,
                             unit_update_t *up)
{
  for (int i = 0; i < n; i++) {
    up[i].d = ds[i];
    dart_ret_t ret = units_combine(ds[i]->unit_ids, ds[i]->num_units,
                                   units->unit_ids, units->num_units, add,
                                   &up[i].units, &up[i].num);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

static void log_tags_too_long(const char *func, const domain_t *d)
{
  DART_LOG_ERROR_IN(func, "the tags below '%s' would exceed %d characters",
                    d->domain_tag, TAG_MAX - 1);
}

/* children of d with sub at pos and without drop (either may be NULL) */
static domain_t **children_edited(const domain_t *d, const domain_t *drop,
                                  domain_t *sub, int pos, int *n_out)
{
  int n = 0;
  domain_t **v =
      malloc(((size_t)d->num_domains + 1) * sizeof *v);
  if (v == NULL) return NULL;
  for (int i = 0; i < d->num_domains; i++)
    if (d->children[i] != drop) v[n++] = d->children[i];
  if (sub != NULL) {
    memmove(v + pos + 1, v + pos, (size_t)(n - pos) * sizeof *v);
    v[pos] = sub;
    n++;
  }
  *n_out = n;
  return v;
}

/* Makes sub (the root of its own hierarchy) subdomain pos of parent. */
static dart_ret_t graft(const char *func, domain_t *parent, domain_t *sub,
                        int pos)
{
  int m = ancestors_apart(parent, NULL, NULL), n;
  domain_t **anc = malloc((size_t)m * sizeof *anc);
  unit_update_t *up = calloc((size_t)m, sizeof *up);
  domain_t **children = children_edited(parent, NULL, sub, pos, &n);
  dart_ret_t ret = DART_ERR_NOMEM;
  if (anc == NULL || up == NULL || children == NULL) goto fail;
  ancestors_apart(parent, NULL, anc);
  if ((ret = plan_units(anc, m, sub, true, up)) != DART_OK) goto fail;
  if (!tags_fit(parent->domain_tag, children, n)) {
    log_tags_too_long(func, parent);
    ret = DART_ERR_INVAL;
    goto fail;
  }
  free(parent->children);
  parent->children = children;
  parent->num_domains = n;
  sub->parent = parent;
  updates_commit(up, m);
  free(anc);
  retag(parent);
  settle_hierarchy(parent);
  return DART_OK;
fail:
  free(children);
  if (up != NULL) updates_discard(up, m);
  free(anc);
  return ret;
}

/* Moves d (not a root) to be subdomain pos of np, in d's hierarchy and
 * not below d. */
static dart_ret_t move_domain(const char *func, domain_t *d, domain_t *np,
                              int pos)
{
  domain_t *old = d->parent;
  int nlose = ancestors_apart(old, np, NULL);
  int ngain = ancestors_apart(np, old, NULL);
  int nold = 0, nnew = 0;
  domain_t **lose = malloc(((size_t)nlose + 1) * sizeof *lose);
  domain_t **gain = malloc(((size_t)ngain + 1) * sizeof *gain);
  unit_update_t *up = calloc((size_t)(nlose + ngain) + 1, sizeof *up);
  domain_t **old_children = children_edited(old, d, NULL, 0, &nold);
  domain_t **new_children = children_edited(np, d, d, pos, &nnew);
  dart_ret_t ret = DART_ERR_NOMEM;
  if (!lose || !gain || !up || !old_children || !new_children) goto fail;
  ancestors_apart(old, np, lose);
  ancestors_apart(np, old, gain);
  if ((ret = plan_units(lose, nlose, d, false, up)) != DART_OK ||
      (ret = plan_units(gain, ngain, d, true, up + nlose)) != DART_OK)
    goto fail;
  if (!tags_fit(np->domain_tag, new_children, nnew)) {
    log_tags_too_long(func, np);
    ret = DART_ERR_INVAL;
    goto fail;
  }
  if (old != np) {
    free(old->children);
    old->children = nold > 0 ? old_children : NULL;
    old->num_domains = nold;
    if (nold == 0) free(old_children);
  } else {
    free(old_children);
  }
  free(np->children);
  np->children = new_children;
  np->num_domains = nnew;
  d->parent = np;
  updates_commit(up, nlose + ngain);
  free(gain);
  free(lose);
  retag(old);
  retag(np);
  settle_hierarchy(np);
  return DART_OK;
fail:
  free(new_children);
  free(old_children);
  if (up != NULL) updates_discard(up, nlose + ngain);
  free(gain);
  free(lose);
  return ret;
}

/* Puts members[0..n) (subdomains of parent, in their order) under a new
 * GROUP domain at the place of the first of them. */
static dart_ret_t group_domains(const char *func, domain_t *parent,
                                domain_t *const *members, int n,
                                char *tag_out)
{
  dart_ret_t ret = DART_ERR_NOMEM;
  int total = 0, k = 0;
  for (int i = 0; i < n; i++) total += members[i]->num_units;
  domain_t *g = domain_new();
  domain_t **children =
      malloc(((size_t)parent->num_domains - (size_t)n + 1) * sizeof *children);
  if (g == NULL || children == NULL) goto fail;
  if ((g->children = malloc((size_t)n * sizeof *g->children)) == NULL)
    goto fail;
  if (total > 0 &&
      (g->unit_ids = malloc((size_t)total * sizeof *g->unit_ids)) == NULL)
    goto fail;
  memcpy(g->children, members, (size_t)n * sizeof *members);
  g->num_domains = n;
  for (int i = 0; i < n; i++) {
    if (members[i]->num_units == 0) continue;
    memcpy(g->unit_ids + g->num_units, members[i]->unit_ids,
           (size_t)members[i]->num_units * sizeof *g->unit_ids);
    g->num_units += members[i]->num_units;
  }
  g->num_units = units_normalise(g->unit_ids, g->num_units);
  g->scope = DART_LOCALITY_SCOPE_GROUP;
  g->team = parent->team;
  for (int i = 0, m = 0; i < parent->num_domains; i++) {
    if (m < n && parent->children[i] == members[m]) {
      if (m++ == 0) children[k++] = g;
    } else {
      children[k++] = parent->children[i];
    }
  }
  if (!tags_fit(parent->domain_tag, children, k)) {
    log_tags_too_long(func, parent);
    ret = DART_ERR_INVAL;
    goto fail;
  }
  free(parent->children);
  parent->children = children;
  parent->num_domains = k;
  g->parent = parent;
  retag(parent);
  settle_hierarchy(parent);
  strcpy(tag_out, g->domain_tag);
  return DART_OK;
fail:
  /* g's subdomains still belong to parent */
  if (g != NULL) {
    free(g->children);
    free(g->unit_ids);
    free(g);
  }
  free(children);
  return ret;
}

/* Collects the subdomains to cut so that below x only the domains in keep
 * (sorted; path: keep and their ancestors, sorted) remain. */
static dart_ret_t collect_unselected(domain_t *x, domain_t *const *keep,
                                     int nkeep, domain_t *const *path,
                                     int npath, domain_list_t *cuts)
{
  if (ptr_in(keep, nkeep, x)) return DART_OK;
  for (int i = 0; i < x->num_domains; i++) {
    domain_t *c = x->children[i];
    dart_ret_t ret = ptr_in(path, npath, c)
                         ? collect_unselected(c, keep, nkeep, path, npath,
                                              cuts)
                         : list_push(cuts, c);
    if (ret != DART_OK) return ret;
  }
  return DART_OK;
}

/* Keeps below in only keep[0..n) (domains in in's subtree), their
 * subdomains and their ancestors. */
static dart_ret_t select_domains(domain_t *in, domain_t *const *keep, int n)
{
  int npath = 0;
  for (int i = 0; i < n; i++)
    for (const domain_t *a = keep[i]; a != in->parent; a = a->parent)
      npath++;
  domain_t **sorted = malloc(((size_t)n + 1) * sizeof *sorted);
  domain_t **path = malloc(((size_t)npath + 1) * sizeof *path);
  domain_list_t cuts = {0};
  dart_ret_t ret = DART_ERR_NOMEM;
  if (sorted == NULL || path == NULL) goto out;
  int k = 0;
  for (int i = 0; i < n; i++) {
    sorted[i] = keep[i];
    for (domain_t *a = keep[i]; a != in->parent; a = a->parent) path[k++] = a;
  }
  qsort(sorted, (size_t)n, sizeof *sorted, ptr_cmp);
  qsort(path, (size_t)npath, sizeof *path, ptr_cmp);
  ret = collect_unselected(in, sorted, n, path, npath, &cuts);
  if (ret == DART_OK) ret = remove_subtrees(cuts.v, cuts.n);
  if (ret == DART_OK) settle_hierarchy(in);
out:
  free(cuts.v);
  free(path);
  free(sorted);
  return ret;
}

/* ======================================================================
 * Building a team's hierarchy
 * ====================================================================== */

/*
 * A team's hierarchy: GLOBAL -> NODE -> MODULE -> NUMA -> CORE, the CORE
 * domains being the leaves, one per unit (as in DART-MPI, where every
 * domain of scope CORE or below stands for exactly one unit): units that
 * share a physical core (SMT siblings, more units than cores) each have a
 * CORE domain of their own. Within a NUMA domain they follow their
 * physical cores, units of one core by unit id.
 */
typedef struct {
  int node, numa, core, unit; /* node of the team, NUMA, core, team unit */
} unit_key_t;

static int key_cmp(const void *a, const void *b)
{
  const unit_key_t *x = a, *y = b;
  if (x->node != y->node) return (x->node > y->node) - (x->node < y->node);
  if (x->numa != y->numa) return (x->numa > y->numa) - (x->numa < y->numa);
  if (x->core != y->core) return (x->core > y->core) - (x->core < y->core);
  return (x->unit > y->unit) - (x->unit < y->unit);
}

typedef struct {
  const dart__team_t *team;
  const dart__team__hwrec_t *recs;
  const unit_key_t *keys; /* sorted */
  domain_t **leaf;        /* team unit -> its CORE domain */
} build_t;

static int key_at(const unit_key_t *k, dart_locality_scope_t scope)
{
  switch (scope) {
    case DART_LOCALITY_SCOPE_NODE: return k->node;
    case DART_LOCALITY_SCOPE_NUMA: return k->numa;
    case DART_LOCALITY_SCOPE_CORE: return k->unit; /* one per unit */
    default: return 0; /* one module per node */
  }
}

static dart_locality_scope_t scope_below(dart_locality_scope_t scope)
{
  switch (scope) {
    case DART_LOCALITY_SCOPE_NODE: return DART_LOCALITY_SCOPE_MODULE;
    case DART_LOCALITY_SCOPE_MODULE: return DART_LOCALITY_SCOPE_NUMA;
    default: return DART_LOCALITY_SCOPE_CORE;
  }
}

static int bytes_field(int64_t bytes)
{
  return bytes < 0 ? -1 : bytes > INT_MAX ? INT_MAX : (int)bytes;
}

static dart_ret_t build_children(const build_t *b, domain_t *d,
                                 dart_locality_scope_t scope, int lo, int hi);

/* Fills d, a domain at scope that holds the units keys[lo..hi). */
static dart_ret_t build_domain(const build_t *b, domain_t *d,
                               dart_locality_scope_t scope, int lo, int hi)
{
  const unit_key_t *first = &b->keys[lo];
  const dart__team__hwrec_t *r = &b->recs[first->unit];
  d->scope = scope;
  d->team = b->team->id;
  d->node_id = first->node;
  d->num_nodes = 1;
  memcpy(d->host, r->hw.host, sizeof d->host);
  switch (scope) {
    case DART_LOCALITY_SCOPE_NODE:
    case DART_LOCALITY_SCOPE_MODULE:
      d->num_cores = r->hw.num_cores;
      d->shared_mem_bytes = bytes_field(r->system_bytes);
      break;
    case DART_LOCALITY_SCOPE_NUMA:
      d->num_cores = r->numa_cores;
      d->shared_mem_bytes = bytes_field(r->numa_bytes);
      break;
    default:
      d->num_cores = 1;
      d->shared_mem_bytes = bytes_field(r->numa_bytes);
      break;
  }
  d->unit_ids = malloc((size_t)(hi - lo) * sizeof *d->unit_ids);
  if (d->unit_ids == NULL) return DART_ERR_NOMEM;
  for (int i = lo; i < hi; i++)
    d->unit_ids[i - lo].id = b->team->members[b->keys[i].unit];
  d->num_units = units_normalise(d->unit_ids, hi - lo);
  if (scope == DART_LOCALITY_SCOPE_CORE) {
    b->leaf[first->unit] = d;
    return DART_OK;
  }
  return build_children(b, d, scope_below(scope), lo, hi);
}

/* Gives d (holding the units keys[lo..hi)) its subdomains at scope. */
static dart_ret_t build_children(const build_t *b, domain_t *d,
                                 dart_locality_scope_t scope, int lo, int hi)
{
  int count = 0;
  for (int i = lo; i < hi; i++)
    count += i == lo ||
             key_at(&b->keys[i], scope) != key_at(&b->keys[i - 1], scope);
  d->children = malloc((size_t)count * sizeof *d->children);
  if (d->children == NULL) return DART_ERR_NOMEM;
  for (int i = lo; i < hi;) {
    int j = i + 1;
    while (j < hi && key_at(&b->keys[j], scope) == key_at(&b->keys[i], scope))
      j++;
    domain_t *c = domain_new();
    if (c == NULL) return DART_ERR_NOMEM;
    c->parent = d;
    d->children[d->num_domains++] = c;
    dart_ret_t ret = build_domain(b, c, scope, i, j);
    if (ret != DART_OK) return ret;
    i = j;
  }
  return DART_OK;
}

static void locality_free(team_locality_t *tl)
{
  if (tl == NULL) return;
  domain_free(tl->root);
  free(tl->units);
  free(tl);
}

/* The hierarchy of team from the units' records. */
static dart_ret_t build_hierarchy(const dart__team_t *team,
                                  const dart__team__hwrec_t *recs,
                                  team_locality_t **out)
{
  const int n = team->size;
  dart_ret_t ret = DART_ERR_NOMEM;
  int *node_index = malloc((size_t)dart__rt.num_nodes * sizeof *node_index);
  int *tnode = malloc((size_t)n * sizeof *tnode);
  unit_key_t *keys = malloc((size_t)n * sizeof *keys);
  domain_t **leaf = calloc((size_t)n, sizeof *leaf);
  team_locality_t *tl = calloc(1, sizeof *tl);
  dart_unit_locality_t *units = calloc((size_t)n, sizeof *units);
  domain_t *root = domain_new();
  if (!node_index || !tnode || !keys || !leaf || !tl || !units || !root)
    goto out;
  /* the team's nodes, numbered in the order of their first unit */
  for (int i = 0; i < dart__rt.num_nodes; i++) node_index[i] = -1;
  int nodes = 0;
  for (int u = 0; u < n; u++) {
    int *index = &node_index[dart__rt.node_of[team->members[u]]];
    if (*index < 0) *index = nodes++;
    tnode[u] = *index;
    keys[u] = (unit_key_t){tnode[u], recs[u].hw.numa_id, recs[u].hw.core_id,
                           u};
  }
  qsort(keys, (size_t)n, sizeof *keys, key_cmp);
  root->scope = DART_LOCALITY_SCOPE_GLOBAL;
  root->team = team->id;
  if ((root->unit_ids = malloc((size_t)n * sizeof *root->unit_ids)) == NULL)
    goto out;
  for (int u = 0; u < n; u++) root->unit_ids[u].id = team->members[u];
  root->num_units = n;
  const build_t b = {team, recs, keys, leaf};
  if ((ret = build_children(&b, root, DART_LOCALITY_SCOPE_NODE, 0, n)) !=
      DART_OK)
    goto out;
  if (!tags_fit(".", root->children, root->num_domains)) {
    DART_LOG_ERROR("the domain tags of team %d would exceed %d characters",
                   team->id, TAG_MAX - 1);
    ret = DART_ERR_OTHER;
    goto out;
  }
  retag(root);
  settle(root, NULL);
  number_global(root);
  /* a unit's cores: its node's, shared evenly among the team's units
   * there (at least one), as DART-MPI reports them; DASH starts a thread
   * on each (UnitLocality::num_domain_threads) */
  int *peers = calloc((size_t)nodes, sizeof *peers);
  if (peers == NULL) goto out;
  for (int u = 0; u < n; u++) peers[tnode[u]]++;
  for (int u = 0; u < n; u++) {
    dart_unit_locality_t *ul = &units[u];
    ul->unit.id = u;
    ul->team = team->id;
    ul->hwinfo = recs[u].hw;
    const int share = recs[u].hw.num_cores / peers[tnode[u]];
    ul->hwinfo.num_cores = share > 0 ? share : 1;
    int s = ul->hwinfo.num_scopes;
    if (s < DART_LOCALITY_MAX_DOMAIN_SCOPES) {
      ul->hwinfo.scopes[s].scope = DART_LOCALITY_SCOPE_NODE;
      ul->hwinfo.scopes[s].index = tnode[u];
      ul->hwinfo.num_scopes = s + 1;
    }
    memcpy(ul->domain_tag, leaf[u]->domain_tag, sizeof ul->domain_tag);
  }
  free(peers);
  tl->root = root;
  tl->units = units;
  tl->size = n;
  *out = tl;
  root = NULL;
  units = NULL;
  tl = NULL;
  ret = DART_OK;
out:
  if (root != NULL) domain_free(root);
  free(units);
  free(tl);
  free(leaf);
  free(keys);
  free(tnode);
  free(node_index);
  return ret;
}

/* Loads this unit's record once per dart_init. */
static dart_ret_t load_my_record(void)
{
  if (my_rec_loaded) return DART_OK;
  char host[DART_LOCALITY_HOST_MAX_SIZE];
  if (gethostname(host, sizeof host) != 0) host[0] = '\0';
  host[sizeof host - 1] = '\0';
  if (dart__base__config.units_per_node > 0) {
    /* emulated nodes share one host name: '#' never occurs in a real one,
     * so that "host#node" names each emulated node apart */
    char suffix[16];
    int len = snprintf(suffix, sizeof suffix, "#%d", dart__rt.my_node);
    host[sizeof host - 1 - (size_t)len] = '\0';
    strcat(host, suffix);
  }
  int node_rank = 0;
  for (int u = 0; u < dart__rt.myid; u++)
    node_rank += dart__rt.node_of[u] == dart__rt.my_node;
  dart_ret_t ret = dart__team__hwinfo_load(host, node_rank, &my_rec);
  my_rec_loaded = ret == DART_OK;
  return ret;
}

dart_ret_t dart__team__locality_build(dart__team_t *team, const char *func)
{
  dart__team__hwrec_t mine;
  const dart_ret_t mine_ret = load_my_record();
  if (mine_ret == DART_OK) {
    mine = my_rec;
  } else {
    memset(&mine, 0, sizeof mine);
    mine.status = mine_ret;
  }
  dart__team__hwrec_t *recs = malloc((size_t)team->size * sizeof *recs);
  if (recs == NULL) return DART_ERR_NOMEM;
  dart_ret_t ret = DART_ERR_OTHER;
  MPI_Request req;
  /* every unit takes part, even one that failed: peers must not hang */
  if (MPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, recs,
                     (int)sizeof mine, MPI_BYTE, team->comm,
                     &req) != MPI_SUCCESS) {
    DART_LOG_ERROR_IN(func, "MPI_Iallgather of the hardware records failed");
    goto out;
  }
  if ((ret = dart__progress__wait(func, 1, &req)) != DART_OK)
    goto out;
  /* this unit's own failure was logged where it happened */
  ret = mine_ret;
  for (int u = 0; u < team->size && ret == DART_OK; u++) {
    if (recs[u].status != DART_OK) {
      DART_LOG_ERROR_IN(func, "unit %d could not load its hardware topology",
                        team->members[u]);
      ret = (dart_ret_t)recs[u].status;
    }
  }
  if (ret != DART_OK) goto out;
  team_locality_t *tl = NULL;
  if ((ret = build_hierarchy(team, recs, &tl)) != DART_OK) {
    if (ret == DART_ERR_NOMEM)
      DART_LOG_ERROR_IN(func, "out of memory for the hierarchy of team %d",
                        team->id);
    goto out;
  }
  locality_free(team_locs[team->id]);
  team_locs[team->id] = tl;
out:
  free(recs);
  return ret;
}

void dart__team__locality_release(dart_team_t team)
{
  locality_free(team_locs[team]);
  team_locs[team] = NULL;
}

void dart__team__locality_fini(void) { my_rec_loaded = false; }

void dart__team__locality_print_info(FILE *out)
{
  if (!my_rec_loaded) return;
  const dart_hwinfo_t *hw = &my_rec.hw;
  static const char *const mhz_from[] = {
      [DART__TEAM__HW_CONFIG] = "DART_CPU_MHZ",
      [DART__TEAM__HW_CPUFREQ] = "cpufreq",
      [DART__TEAM__HW_CPUINFO] = "/proc/cpuinfo",
      [DART__TEAM__HW_HWLOC] = "hwloc's CPU kinds"};
  static const char *const mbps_from[] = {
      [DART__TEAM__HW_CONFIG] = "DART_SHMEM_MBPS",
      [DART__TEAM__HW_HWLOC] = "hwloc's memory attributes"};
  fprintf(out, "locality: clock %d..%d MHz (%s), shared-memory bandwidth %d "
          "MB/s (%s), memory %d MiB, NUMA domain %d MiB\n",
          hw->min_cpu_mhz, hw->max_cpu_mhz, mhz_from[my_rec.mhz_source],
          hw->max_shmem_mbps, mbps_from[my_rec.mbps_source],
          hw->system_memory_bytes, hw->numa_memory_bytes);
}

/* ======================================================================
 * Public functions
 * ====================================================================== */

#define CHECK_NOT_NULL(cond, ...)              \
  do {                                         \
    if (!(cond)) {                             \
      DART_LOG_ERROR(__VA_ARGS__);             \
      return DART_ERR_INVAL;                   \
    }                                          \
  } while (0)

static bool check_scope(const char *func, dart_locality_scope_t scope)
{
  if (scope_valid(scope)) return true;
  DART_LOG_ERROR_IN(func, "scope %d is not a locality scope", (int)scope);
  return false;
}

/* The domain tagged tag at or below in (*ret DART_OK), or NULL: *ret is
 * DART_ERR_INVAL for a malformed tag (logged, naming func) and
 * DART_ERR_NOTFOUND for a well-formed one of no domain (not logged: the
 * caller decides whether that is an error). */
static domain_t *lookup_tag(const char *func, const domain_t *in,
                            const char *tag, dart_ret_t *ret)
{
  if (tag == NULL || !tag_valid(tag)) {
    DART_LOG_ERROR_IN(func, "domain tag '%.40s' is malformed",
                      tag ? tag : "(null)");
    *ret = DART_ERR_INVAL;
    return NULL;
  }
  domain_t *d = find_tag(in, tag);
  *ret = d != NULL ? DART_OK : DART_ERR_NOTFOUND;
  return d;
}

/* Resolves the tags[0..n) (n > 0) of an edit of in: a new array of
 * domains strictly below in (at in too if may_be_in), or one log line. */
static dart_ret_t resolve_tags(const char *func, const domain_t *in, int n,
                               const char **tags, bool may_be_in,
                               domain_t ***out)
{
  if (n <= 0) {
    DART_LOG_ERROR_IN(func, "%d domain tags: at least one is needed", n);
    return DART_ERR_INVAL;
  }
  if (tags == NULL) {
    DART_LOG_ERROR_IN(func, "the array of %d domain tags is NULL", n);
    return DART_ERR_INVAL;
  }
  domain_t **found = malloc((size_t)n * sizeof *found);
  if (found == NULL) return DART_ERR_NOMEM;
  for (int i = 0; i < n; i++) {
    dart_ret_t ret;
    found[i] = lookup_tag(func, in, tags[i], &ret);
    if (found[i] == NULL || (found[i] == in && !may_be_in)) {
      if (found[i] != NULL)
        DART_LOG_ERROR_IN(func, "domain '%s' is the domain edited, not one "
                          "below it", tags[i]);
      else if (ret == DART_ERR_NOTFOUND)
        DART_LOG_ERROR_IN(func, "no domain '%s' at or below '%s'", tags[i],
                          in->domain_tag);
      free(found);
      /* an unknown tag is bad input to an edit */
      return DART_ERR_INVAL;
    }
  }
  *out = found;
  return DART_OK;
}

dart_ret_t dart_team_locality_init(dart_team_t team)
{
  DART__CHECK_INIT();
  dart__team_t *t = dart__team__lookup(__func__, team);
  if (t == NULL) return DART_ERR_INVAL;
  return dart__team__locality_build(t, __func__);
}

dart_ret_t dart_team_locality_finalize(dart_team_t team)
{
  DART__CHECK_INIT();
  if (dart__team__lookup(__func__, team) == NULL) return DART_ERR_INVAL;
  if (team_locs[team] == NULL) {
    DART_LOG_ERROR("team %d has no locality hierarchy", team);
    return DART_ERR_NOTFOUND;
  }
  dart__team__locality_release(team);
  return DART_OK;
}

dart_ret_t dart_domain_team_locality(dart_team_t team, const char *domain_tag,
                                     dart_domain_locality_t **team_domain_out)
{
  DART__CHECK_INIT();
  if (dart__team__lookup(__func__, team) == NULL) return DART_ERR_INVAL;
  CHECK_NOT_NULL(team_domain_out != NULL, "team_domain_out is NULL");
  if (team_locs[team] == NULL) {
    DART_LOG_ERROR("team %d has no locality hierarchy", team);
    return DART_ERR_NOTFOUND;
  }
  dart_ret_t ret;
  domain_t *d = lookup_tag(__func__, team_locs[team]->root, domain_tag, &ret);
  if (ret == DART_ERR_NOTFOUND)
    DART_LOG_ERROR("no domain '%s' in the hierarchy of team %d", domain_tag,
                   team);
  if (ret != DART_OK) return ret;
  *team_domain_out = d;
  return DART_OK;
}

dart_ret_t dart_domain_create(dart_domain_locality_t **domain_out)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_out != NULL, "domain_out is NULL");
  domain_t *d = domain_new();
  if (d == NULL) return DART_ERR_NOMEM;
  *domain_out = d;
  return DART_OK;
}

dart_ret_t dart_domain_clone(const dart_domain_locality_t *domain_in,
                             dart_domain_locality_t **domain_out)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL && domain_out != NULL,
                 "domain_in %p or domain_out %p is NULL",
                 (const void *)domain_in, (void *)domain_out);
  return domain_copy(domain_in, domain_out);
}

/* A domain the caller may release or overwrite: a root of its own. */
static bool check_own_root(const char *func, const domain_t *d)
{
  if (d->parent != NULL) {
    DART_LOG_ERROR_IN(func, "domain '%s' is a subdomain of '%s'",
                      d->domain_tag, d->parent->domain_tag);
    return false;
  }
  if (is_runtime_root(d)) {
    DART_LOG_ERROR_IN(func, "domain '%s' is team %d's hierarchy, which "
                      "belongs to the runtime", d->domain_tag, d->team);
    return false;
  }
  return true;
}

dart_ret_t dart_domain_destroy(dart_domain_locality_t *domain)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain != NULL, "domain is NULL");
  if (!check_own_root(__func__, domain)) return DART_ERR_INVAL;
  domain_free(domain);
  return DART_OK;
}

dart_ret_t dart_domain_assign(dart_domain_locality_t *domain_lhs,
                              const dart_domain_locality_t *domain_rhs)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_lhs != NULL && domain_rhs != NULL,
                 "domain_lhs %p or domain_rhs %p is NULL",
                 (void *)domain_lhs, (const void *)domain_rhs);
  if (domain_lhs == domain_rhs) return DART_OK;
  if (!check_own_root(__func__, domain_lhs)) return DART_ERR_INVAL;
  /* copied first: domain_rhs may lie below domain_lhs */
  domain_t *copy;
  dart_ret_t ret = domain_copy(domain_rhs, &copy);
  if (ret != DART_OK) return ret;
  domain_clear(domain_lhs);
  *domain_lhs = *copy;
  for (int i = 0; i < domain_lhs->num_domains; i++)
    domain_lhs->children[i]->parent = domain_lhs;
  free(copy);
  return DART_OK;
}

dart_ret_t dart_domain_find(const dart_domain_locality_t *domain_in,
                            const char *domain_tag,
                            dart_domain_locality_t **subdomain_out)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL && subdomain_out != NULL,
                 "domain_in %p or subdomain_out %p is NULL",
                 (const void *)domain_in, (void *)subdomain_out);
  dart_ret_t ret;
  domain_t *d = lookup_tag(__func__, domain_in, domain_tag, &ret);
  /* not finding a well-formed tag is an answer (NULL), not bad input */
  if (ret != DART_ERR_INVAL) *subdomain_out = d;
  return ret;
}

dart_ret_t dart_domain_select(dart_domain_locality_t *domain_in,
                              int num_subdomain_tags,
                              const char **subdomain_tags)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL, "domain_in is NULL");
  domain_t **keep;
  dart_ret_t ret = resolve_tags(__func__, domain_in, num_subdomain_tags,
                                subdomain_tags, true, &keep);
  if (ret != DART_OK) return ret;
  ret = select_domains(domain_in, keep, num_subdomain_tags);
  free(keep);
  return ret;
}

dart_ret_t dart_domain_exclude(dart_domain_locality_t *domain_in,
                               int num_subdomain_tags,
                               const char **subdomain_tags)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL, "domain_in is NULL");
  domain_t **gone;
  dart_ret_t ret = resolve_tags(__func__, domain_in, num_subdomain_tags,
                                subdomain_tags, false, &gone);
  if (ret != DART_OK) return ret;
  /* a domain below another one removed (or named twice) goes with it */
  qsort(gone, (size_t)num_subdomain_tags, sizeof *gone, ptr_cmp);
  int n = 0;
  for (int i = 0; i < num_subdomain_tags; i++) {
    bool covered = false;
    for (const domain_t *a = gone[i]->parent; a && !covered; a = a->parent)
      covered = ptr_in(gone, num_subdomain_tags, a);
    if (!covered && (n == 0 || gone[n - 1] != gone[i])) gone[n++] = gone[i];
  }
  ret = remove_subtrees(gone, n);
  if (ret == DART_OK) settle_hierarchy(domain_in);
  free(gone);
  return ret;
}

dart_ret_t dart_domain_add_subdomain(dart_domain_locality_t *domain,
                                     dart_domain_locality_t *subdomain,
                                     int subdomain_rel_id)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain != NULL && subdomain != NULL,
                 "domain %p or subdomain %p is NULL", (void *)domain,
                 (void *)subdomain);
  if (!check_own_root(__func__, subdomain)) return DART_ERR_INVAL;
  if (is_within(domain, subdomain)) {
    DART_LOG_ERROR("domain '%s' lies in subdomain '%s' itself",
                   domain->domain_tag, subdomain->domain_tag);
    return DART_ERR_INVAL;
  }
  if (subdomain_rel_id < -1 || subdomain_rel_id > domain->num_domains) {
    DART_LOG_ERROR("relative index %d is not in -1 .. %d",
                   subdomain_rel_id, domain->num_domains);
    return DART_ERR_INVAL;
  }
  const domain_t *root = root_of(domain);
  for (int i = 0, j = 0; i < root->num_units && j < subdomain->num_units;) {
    if (root->unit_ids[i].id < subdomain->unit_ids[j].id) {
      i++;
    } else if (subdomain->unit_ids[j].id < root->unit_ids[i].id) {
      j++;
    } else {
      DART_LOG_ERROR("unit %d of subdomain '%s' is in the hierarchy of '%s' "
                     "already", root->unit_ids[i].id, subdomain->domain_tag,
                     domain->domain_tag);
      return DART_ERR_INVAL;
    }
  }
  return graft(__func__, domain, subdomain,
               subdomain_rel_id < 0 ? domain->num_domains : subdomain_rel_id);
}

dart_ret_t dart_domain_move_subdomain(dart_domain_locality_t *domain,
                                      dart_domain_locality_t *new_parent_domain,
                                      int new_domain_rel_id)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain != NULL && new_parent_domain != NULL,
                 "domain %p or new_parent_domain %p is NULL", (void *)domain,
                 (void *)new_parent_domain);
  domain_t *np = new_parent_domain;
  if (domain->parent == NULL) {
    DART_LOG_ERROR("domain '%s' is a root: it has no place to leave",
                   domain->domain_tag);
    return DART_ERR_INVAL;
  }
  if (root_of(domain) != root_of(np)) {
    DART_LOG_ERROR("domains '%s' and '%s' are in different hierarchies",
                   domain->domain_tag, np->domain_tag);
    return DART_ERR_INVAL;
  }
  if (is_within(np, domain)) {
    DART_LOG_ERROR("domain '%s' cannot move below itself ('%s')",
                   domain->domain_tag, np->domain_tag);
    return DART_ERR_INVAL;
  }
  int room = np->num_domains - (domain->parent == np ? 1 : 0);
  if (new_domain_rel_id < -1 || new_domain_rel_id > room) {
    DART_LOG_ERROR("relative index %d is not in -1 .. %d", new_domain_rel_id,
                   room);
    return DART_ERR_INVAL;
  }
  return move_domain(__func__, domain, np,
                     new_domain_rel_id < 0 ? room : new_domain_rel_id);
}

dart_ret_t dart_domain_split_scope(const dart_domain_locality_t *domain_in,
                                   dart_locality_scope_t scope, int num_parts,
                                   dart_domain_locality_t *split_domain_out)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL && split_domain_out != NULL,
                 "domain_in %p or split_domain_out %p is NULL",
                 (const void *)domain_in, (void *)split_domain_out);
  if (!check_scope(__func__, scope)) return DART_ERR_INVAL;
  if (num_parts <= 0) {
    DART_LOG_ERROR("num_parts %d is not positive", num_parts);
    return DART_ERR_INVAL;
  }
  domain_list_t at = {0};
  int64_t *w = NULL;
  int *ends = NULL;
  domain_t **parts = calloc((size_t)num_parts, sizeof *parts);
  domain_t **keep = NULL;
  dart_ret_t ret = DART_ERR_NOMEM;
  if (parts == NULL) goto out;
  if ((ret = gather_scope(domain_in, scope, &at)) != DART_OK) goto out;
  ret = DART_ERR_NOMEM;
  w = malloc(((size_t)at.n + 1) * sizeof *w);
  ends = malloc(((size_t)at.n + 1) * sizeof *ends);
  keep = malloc(((size_t)at.n + 1) * sizeof *keep);
  if (w == NULL || ends == NULL || keep == NULL) goto out;
  for (int i = 0; i < at.n; i++) w[i] = at.v[i]->num_units;
  const int runs = num_parts < at.n ? num_parts : at.n;
  balance_runs(w, at.n, runs, ends);
  for (int p = 0; p < num_parts; p++) {
    if ((ret = domain_copy(domain_in, &parts[p])) != DART_OK) goto out;
    /* the copy's domains of run p, found by their tags */
    int first = p == 0 ? 0 : p <= runs ? ends[p - 1] : at.n;
    int last = p < runs ? ends[p] : at.n;
    for (int i = first; i < last; i++)
      keep[i - first] = find_tag(parts[p], at.v[i]->domain_tag);
    if ((ret = select_domains(parts[p], keep, last - first)) != DART_OK)
      goto out;
  }
  for (int p = 0; p < num_parts; p++) {
    dart_domain_locality_t *part = &split_domain_out[p];
    *part = *parts[p];
    for (int i = 0; i < part->num_domains; i++)
      part->children[i]->parent = part;
    free(parts[p]);
    parts[p] = NULL;
  }
  ret = DART_OK;
out:
  if (parts != NULL)
    for (int p = 0; p < num_parts; p++)
      if (parts[p] != NULL) domain_free(parts[p]);
  free(parts);
  free(keep);
  free(ends);
  free(w);
  free(at.v);
  return ret;
}

dart_ret_t dart_domain_scope_domains(const dart_domain_locality_t *domain_in,
                                     dart_locality_scope_t scope,
                                     int *num_domains_out,
                                     dart_domain_locality_t ***domains_out)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL && num_domains_out != NULL &&
                     domains_out != NULL,
                 "domain_in %p, num_domains_out %p or domains_out %p is NULL",
                 (const void *)domain_in, (void *)num_domains_out,
                 (void *)domains_out);
  if (!check_scope(__func__, scope)) return DART_ERR_INVAL;
  domain_list_t at = {0};
  dart_ret_t ret = gather_scope(domain_in, scope, &at);
  if (ret != DART_OK) {
    free(at.v);
    return ret;
  }
  *num_domains_out = at.n;
  *domains_out = at.v;
  return DART_OK;
}

dart_ret_t dart_domain_scope_tags(const dart_domain_locality_t *domain_in,
                                  dart_locality_scope_t scope,
                                  int *num_domains_out,
                                  char ***domain_tags_out)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL && num_domains_out != NULL &&
                     domain_tags_out != NULL,
                 "domain_in %p, num_domains_out %p or domain_tags_out %p is "
                 "NULL", (const void *)domain_in, (void *)num_domains_out,
                 (void *)domain_tags_out);
  if (!check_scope(__func__, scope)) return DART_ERR_INVAL;
  domain_list_t at = {0};
  char **tags = NULL;
  int n = 0;
  dart_ret_t ret = gather_scope(domain_in, scope, &at);
  if (ret != DART_OK) goto out;
  ret = DART_ERR_NOMEM;
  if (at.n > 0 && (tags = malloc((size_t)at.n * sizeof *tags)) == NULL)
    goto out;
  for (; n < at.n; n++)
    if ((tags[n] = strdup(at.v[n]->domain_tag)) == NULL) goto out;
  *num_domains_out = n;
  *domain_tags_out = tags;
  tags = NULL;
  ret = DART_OK;
out:
  if (tags != NULL) {
    while (n-- > 0) free(tags[n]);
    free(tags);
  }
  free(at.v);
  return ret;
}

dart_ret_t dart_domain_group(dart_domain_locality_t *domain_in,
                             int num_group_subdomains,
                             const char **group_subdomain_tags,
                             char *group_domain_tag_out)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(domain_in != NULL && group_domain_tag_out != NULL,
                 "domain_in %p or group_domain_tag_out %p is NULL",
                 (void *)domain_in, (void *)group_domain_tag_out);
  const int n = num_group_subdomains;
  domain_t **found;
  dart_ret_t ret = resolve_tags(__func__, domain_in, n, group_subdomain_tags,
                                false, &found);
  if (ret != DART_OK) return ret;
  domain_t *parent = found[0]->parent;
  ret = DART_ERR_INVAL;
  for (int i = 1; i < n; i++) {
    if (found[i]->parent != parent) {
      DART_LOG_ERROR("domains '%s' and '%s' have different parents",
                     found[0]->domain_tag, found[i]->domain_tag);
      goto out;
    }
  }
  /* the members in the parent's order; a tag named twice is an error */
  qsort(found, (size_t)n, sizeof *found, ptr_cmp);
  for (int i = 1; i < n; i++) {
    if (found[i] == found[i - 1]) {
      DART_LOG_ERROR("domain '%s' is named twice", found[i]->domain_tag);
      goto out;
    }
  }
  domain_t **members = malloc((size_t)n * sizeof *members);
  if (members == NULL) {
    ret = DART_ERR_NOMEM;
    goto out;
  }
  for (int i = 0, m = 0; i < parent->num_domains; i++)
    if (ptr_in(found, n, parent->children[i]))
      members[m++] = parent->children[i];
  ret = group_domains(__func__, parent, members, n, group_domain_tag_out);
  free(members);
out:
  free(found);
  return ret;
}

dart_ret_t dart_unit_locality(dart_team_t team, dart_team_unit_t unit,
                              dart_unit_locality_t **loc)
{
  DART__CHECK_INIT();
  if (dart__team__lookup(__func__, team) == NULL) return DART_ERR_INVAL;
  CHECK_NOT_NULL(loc != NULL, "loc is NULL");
  team_locality_t *tl = team_locs[team];
  if (tl == NULL) {
    DART_LOG_ERROR("team %d has no locality hierarchy", team);
    return DART_ERR_NOTFOUND;
  }
  if (unit.id < 0 || unit.id >= tl->size) {
    DART_LOG_ERROR("unit %d is not in team %d of %d units", unit.id, team,
                   tl->size);
    return DART_ERR_INVAL;
  }
  *loc = &tl->units[unit.id];
  return DART_OK;
}

dart_ret_t dart_group_locality_split(const dart_group_t g,
                                     dart_domain_locality_t *domain,
                                     dart_locality_scope_t scope, size_t n,
                                     size_t *nout, dart_group_t *gout)
{
  DART__CHECK_INIT();
  CHECK_NOT_NULL(g != NULL && domain != NULL && nout != NULL && gout != NULL,
                 "g %p, domain %p, nout %p or gout %p is NULL", (void *)g,
                 (void *)domain, (void *)nout, (void *)gout);
  if (!check_scope(__func__, scope)) return DART_ERR_INVAL;
  if (n == 0) {
    DART_LOG_ERROR("n is 0: no group to split into");
    return DART_ERR_INVAL;
  }
  domain_list_t at = {0};
  dart_global_unit_t *mine = NULL, *seen = NULL;
  dart_unit_t *ids = NULL;
  int *start = NULL, *ends = NULL;
  int64_t *w = NULL;
  size_t made = 0;
  dart_ret_t ret = gather_scope(domain, scope, &at);
  if (ret != DART_OK) goto out;
  ret = DART_ERR_NOMEM;
  /* each domain's members of g, one run of mine per domain */
  size_t total = 0;
  for (int i = 0; i < at.n; i++) total += (size_t)at.v[i]->num_units;
  mine = malloc((total + 1) * sizeof *mine);
  seen = malloc((total + 1) * sizeof *seen);
  ids = malloc((total + 1) * sizeof *ids);
  start = malloc(((size_t)at.n + 1) * sizeof *start);
  ends = malloc(((size_t)at.n + 1) * sizeof *ends);
  w = calloc((size_t)at.n + 1, sizeof *w);
  if (!mine || !seen || !ids || !start || !ends || !w) goto out;
  int k = 0, nm = 0; /* domains holding members, members found */
  for (int i = 0; i < at.n; i++) {
    const domain_t *d = at.v[i];
    int before = nm;
    for (int u = 0; u < d->num_units; u++)
      if (dart__team__group_contains(g, d->unit_ids[u].id))
        mine[nm++] = d->unit_ids[u];
    if (nm > before) {
      start[k] = before;
      w[k++] = nm - before;
    }
  }
  start[k] = nm;
  if (nm > 0) memcpy(seen, mine, (size_t)nm * sizeof *seen);
  const int covered = units_normalise(seen, nm);
  if ((size_t)covered != g->size) {
    int i = 0;
    while (i < covered && seen[i].id == g->units[i]) i++;
    DART_LOG_ERROR("unit %d of the group is in no domain at scope %d below "
                   "'%s'", g->units[i], (int)scope, domain->domain_tag);
    ret = DART_ERR_INVAL;
    goto out;
  }
  const int runs = n < (size_t)k ? (int)n : k;
  balance_runs(w, k, runs, ends);
  for (; made < n; made++) {
    int len = 0;
    if (made < (size_t)runs) {
      int p = (int)made;
      int from = p == 0 ? 0 : start[ends[p - 1]];
      len = units_normalise(mine + from, start[ends[p]] - from);
      for (int i = 0; i < len; i++) ids[i] = mine[from + i].id;
    }
    if ((ret = dart__team__group_from_units(ids, (size_t)len,
                                            &gout[made])) != DART_OK)
      goto out;
  }
  *nout = (size_t)runs;
  ret = DART_OK;
out:
  if (ret != DART_OK)
    while (made-- > 0) dart_group_destroy(&gout[made]);
  free(w);
  free(ends);
  free(start);
  free(ids);
  free(seen);
  free(mine);
  free(at.v);
  return ret;
}
