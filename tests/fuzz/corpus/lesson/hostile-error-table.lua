-- hostile: an error object that is not a string
error({code = 7})
