/*
 * engine/group.c: ads_db_write, with group commit.
 *
 * A durable LMDB commit flushes the device twice (the changed pages, then
 * the meta page that points at them), however little the transaction holds,
 * and one writer at a time commits. So writers that call ads_db_write while
 * another's work or commit is under way wait in a queue; when it is over,
 * the first of them leads a group: it begins one LMDB write transaction (the
 * root), runs its own work there, then lets each writer waiting run its work
 * in turn, in the writer's own thread (up to ADS_GROUP_COMMIT_MAX works in
 * all, in arrival order, joiners included while the group runs), commits the
 * root once, and tells every member how it went. A writer that finds no
 * group running leads at once: alone, it waits for nobody, and its LMDB
 * calls are those of ads_txn_begin and ads_txn_commit.
 *
 * Each work runs in a write transaction shaped as ads_txn_begin makes one (a
 * parent keeping generator state, a child taking the work); a member's parent
 * is nested in the root. A work that fails is dropped alone, keeping its
 * generator state, exactly as a transaction of its own would be; one that
 * succeeds is committed into the root. Every member returns only after the
 * root's commit, so what ads_db_write acknowledges is durable; what follows a
 * commit (Attribute names learnt, after-commit hooks) runs then, in the
 * member's thread. If the root cannot commit, every work in it fails with that
 * error. LMDB's write lock belongs to the thread that began the root, so the
 * leader begins and commits it; the turns are handed over under group_lock,
 * and only the member whose turn it is touches the root's children.
 */
#include "base/limits.h"
#include "engine/engine_int.h"

enum gm_state { GM_QUEUED, GM_LEAD, GM_TURN, GM_RAN, GM_DONE };

struct group_writer {
    ads_txn_fn fn;
    void *ctx;
    ads_error *err;
    group_writer *next; /* in the queue, then in the leader's list of members */
    group_writer *leader;
    MDB_txn *root;      /* the group's root, during the member's turn */
    uint64_t names_root; /* its number for the name table (names.c) */
    pthread_cond_t cond; /* its state changed (the leader's: a member ran) */
    enum gm_state state;
    int fn_rc;     /* what the work returned */
    int rc;        /* the result so far: 0 when the work is in the root */
    bool full;     /* the map filled: grow it, run the work again */
    bool handed;   /* the work handed out identifiers or sequence values */
    bool merged;   /* the member's parent (work or kept state) is in the root */
    bool broke;    /* merging failed: the root must be aborted */
    int broke_mrc; /* LMDB's code for that */
    int group_mrc; /* LMDB's code for the root's commit (0: durable) */
    ads_txn *txn;  /* the member's transaction, ended after the root's commit */
};

/* The store whose write work this thread is running (do_work), or NULL: a
 * write asked for from inside that work would wait for itself. */
static _Thread_local const ads_db *working_on;

bool ads_db__in_write(const ads_db *db)
{
    return working_on == db;
}

/* Run m's work in t, then settle t into its parent. */
static void do_work(group_writer *m, ads_txn *t, bool *keep, bool *bad)
{
    const ads_db *was = working_on;
    working_on = t->db;
    int rc = m->fn(t, m->ctx, m->err);
    working_on = was;
    m->fn_rc = rc;
    m->full = t->broken && t->broken_rc == ADS_EMAPFULL;
    m->handed = ads_seq__dirty(t); /* before settling writes it */
    bool commit = rc == 0 && !m->full;
    int src = ads_txn__settle(t, commit, keep, bad, commit ? m->err : NULL);
    m->rc = rc ? rc : m->full ? ADS_EMAPFULL : src;
}

/* The group is over (group_lock held): the next writer waiting leads. */
static void pass_lead(ads_db *db)
{
    group_writer *m = db->group_head;
    if (!m) {
        db->group_busy = false;
        return;
    }
    db->group_head = m->next;
    if (!db->group_head)
        db->group_tail = NULL;
    m->next = NULL;
    m->state = GM_LEAD;
    pthread_cond_signal(&m->cond);
}

/* Give the turn to the writers waiting, one after another (group_lock held;
 * waits while each works). n: works in the group so far. Returns the list
 * of members that ran; *dirty and *broken gather what they did. */
static group_writer *run_members(ads_db *db, group_writer *me, const ads_txn *lt, size_t n,
                                 bool *dirty, bool *broken, int *broke_mrc)
{
    group_writer *first = NULL, **tail = &first;
    while (n < ADS_GROUP_COMMIT_MAX && db->group_head && !*broken) {
        group_writer *m = db->group_head;
        db->group_head = m->next;
        if (!db->group_head)
            db->group_tail = NULL;
        m->next = NULL;
        *tail = m;
        tail = &m->next;
        n++;
        m->leader = me;
        m->root = lt->parent;
        m->names_root = lt->names_root;
        m->state = GM_TURN;
        pthread_cond_signal(&m->cond);
        while (m->state != GM_RAN)
            pthread_cond_wait(&me->cond, &db->group_lock);
        *dirty |= m->merged;
        if (m->broke) {
            *broken = true;
            *broke_mrc = m->broke_mrc;
        }
    }
    return first;
}

/* Lead a group: me's own work, the members', one commit. */
static void lead(ads_db *db, group_writer *me)
{
    ads_txn *t;
    bool keep = false, bad = false;
    me->rc = ads_txn_begin(&t, db, 0, me->err);
    if (me->rc) {
        pthread_mutex_lock(&db->group_lock);
        pass_lead(db);
        pthread_mutex_unlock(&db->group_lock);
        return;
    }
    MDB_txn *root = t->parent;
    do_work(me, t, &keep, &bad);
    bool dirty = keep && !bad, broken = bad;
    int mrc = 0;
    group_writer *members = NULL;
    pthread_mutex_lock(&db->group_lock);
    if (!broken && !me->full)
        members = run_members(db, me, t, 1, &dirty, &broken, &mrc);
    pthread_mutex_unlock(&db->group_lock);
    if (dirty && !broken)
        mrc = mdb_txn_commit(root);
    else
        mdb_txn_abort(root);
    ads_names__root_end(db, t->names_root, dirty && !broken && !mrc);
    t->parent = t->txn = NULL;

    pthread_mutex_lock(&db->group_lock);
    for (group_writer *m = members, *next; m; m = next) {
        next = m->next;
        m->group_mrc = mrc;
        m->state = GM_DONE;
        pthread_cond_signal(&m->cond);
    }
    pass_lead(db);
    pthread_mutex_unlock(&db->group_lock);

    if (mrc && keep && !bad)
        me->rc = ads_txn__root_failed(t, me->rc, me->handed, mrc, me->err);
    ads_txn__end(t, me->rc == 0 && !broken);
}

/* m's turn in a group (its thread; the leader waits): its work in
 * transactions nested in the root, merged into the root if it holds
 * anything. */
static void take_turn(ads_db *db, group_writer *m)
{
    ads_txn *t;
    bool keep = false, bad = false;
    m->rc = ads_txn__begin_nested(&t, db, m->root, m->names_root, m->err);
    if (m->rc)
        return;
    do_work(m, t, &keep, &bad);
    if (keep && !bad) {
        int mrc = mdb_txn_commit(t->parent);
        if (mrc) {
            m->broke = true;
            m->broke_mrc = mrc;
            if (!m->rc)
                m->rc = ads_txn__root_failed(t, 0, m->handed, mrc, m->err);
        } else {
            m->merged = true;
        }
    } else {
        mdb_txn_abort(t->parent);
    }
    t->parent = t->txn = NULL;
    m->txn = t;
}

/* After the root's commit: m's result, and the end of its transaction. */
static void after_group(group_writer *m)
{
    ads_txn *t = m->txn;
    if (!t)
        return;
    if (m->merged && m->group_mrc)
        m->rc = ads_txn__root_failed(t, m->rc, m->handed, m->group_mrc, m->err);
    ads_txn__end(t, m->rc == 0 && m->merged);
}

/* One attempt of m's work: alone, as a group's leader or as a member. */
static void write_once(ads_db *db, group_writer *m)
{
    pthread_mutex_lock(&db->group_lock);
    if (!db->group_busy) {
        db->group_busy = true;
        m->state = GM_LEAD;
    } else {
        if (db->group_tail)
            db->group_tail->next = m;
        else
            db->group_head = m;
        db->group_tail = m;
        while (m->state == GM_QUEUED)
            pthread_cond_wait(&m->cond, &db->group_lock);
    }
    enum gm_state st = m->state; /* GM_LEAD or GM_TURN: nobody else changes it now */
    pthread_mutex_unlock(&db->group_lock);
    if (st == GM_LEAD) {
        lead(db, m);
        return;
    }
    take_turn(db, m);
    pthread_mutex_lock(&db->group_lock);
    m->state = GM_RAN;
    pthread_cond_signal(&m->leader->cond);
    while (m->state != GM_DONE)
        pthread_cond_wait(&m->cond, &db->group_lock);
    pthread_mutex_unlock(&db->group_lock);
    after_group(m);
}

int ads_db_write(ads_db *db, ads_txn_fn fn, void *ctx, ads_error *err)
{
    if (!db || !fn)
        return ads_error_set(err, ADS_EINVAL, "no store or no work");
    for (int attempt = 0;; attempt++) {
        unsigned seen = ads_db__grown(db);
        group_writer m = {.fn = fn, .ctx = ctx, .err = err, .state = GM_QUEUED};
        pthread_cond_init(&m.cond, NULL);
        write_once(db, &m);
        pthread_cond_destroy(&m.cond);
        /* the map filled during the work or at the commit: grow, run again */
        if (!m.full && !(m.rc == ADS_EMAPFULL && m.fn_rc == 0))
            return m.rc;
        if (attempt >= 40)
            return ads_error_set(err, ADS_EMAPFULL, "the store's map cannot grow any further");
        int rc = ads_db__grow(db, seen, err);
        if (rc)
            return rc;
        ads_error_clear(err);
    }
}
