# Teams: creation from groups, nesting, clones, ids, translation, sub-team
# collectives, destroy, 200 teams in a loop.
dart_add_test(team SOURCES test_team.c)
