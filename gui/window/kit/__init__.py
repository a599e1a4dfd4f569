"""Small parts every room builds on: the themes and their contrast maths, remembered layouts, resources, questions."""
