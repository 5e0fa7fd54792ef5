/*
 * tests/classad/arena_fixture.h: the arena a classad test file works in,
 * made before each test (setup) and freed after it (teardown), so nothing
 * one test parses outlives it. Included once, by the test file itself.
 */
#ifndef ADS_TESTS_CLASSAD_ARENA_FIXTURE_H
#define ADS_TESTS_CLASSAD_ARENA_FIXTURE_H

static ads_arena *arena;

static int setup(void **state)
{
    (void)state;
    arena = ads_arena_new();
    return arena ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ads_arena_free(arena);
    return 0;
}

#endif
